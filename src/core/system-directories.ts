/**
 * @module system-directories — the directories no edgeop process may take as its own: the operating system's, and those whose contents something runs.
 *
 * One denylist for every directory a flag names (the agent's `--root`, any operator's
 * `--cache-dir`): a file written into one of these replaces the node's programs or
 * configuration, or is executed by the kubelet, the container runtime, cron, systemd or sshd.
 */
import { sep } from 'node:path'

/**
 * Directories whose whole tree is refused. The operating system's (FHS 3.0 and the kernel's virtual
 * filesystems): programs, libraries, configuration, devices, kernel state, the superuser's home. And
 * trees outside those whose files are run or trusted as they appear:
 * - static pods and auto-applied manifests: `/var/lib/rancher/{k3s,rke2}/server/manifests` and
 *   `…/agent/pod-manifests` (k3s and RKE2 docs, "Auto-Deploying Manifests", "static pods");
 *   kubeadm's `/etc/kubernetes/manifests` is under `/etc`;
 * - the kubelet's state, plugins and pod volumes: `/var/lib/kubelet`; CNI plugins the runtime
 *   executes: `/opt/cni/bin` (CNI spec, `CNI_PATH`);
 * - container runtimes' state and images: `/var/lib/containerd`, `/var/lib/docker`, `/run/containerd`;
 * - systemd units loaded at runtime: `/run/systemd` (`/etc/systemd/system` is under `/etc`);
 * - crontabs: `/var/spool/cron` (`crontabs/` below it; `/etc/cron.d` is under `/etc`);
 * - package databases: `/var/lib/dpkg`, `/var/lib/apt`, `/var/lib/rpm`.
 */
export const SYSTEM_TREES: readonly string[] = [
  '/bin',
  '/boot',
  '/dev',
  '/etc',
  '/lib',
  '/lib32',
  '/lib64',
  '/libx32',
  '/opt/cni/bin',
  '/proc',
  '/root',
  '/run/containerd',
  '/run/systemd',
  '/sbin',
  '/sys',
  '/usr',
  '/var/lib/apt',
  '/var/lib/containerd',
  '/var/lib/docker',
  '/var/lib/dpkg',
  '/var/lib/kubelet',
  '/var/lib/rancher/k3s/agent/pod-manifests',
  '/var/lib/rancher/k3s/server/manifests',
  '/var/lib/rancher/rke2/agent/pod-manifests',
  '/var/lib/rancher/rke2/server/manifests',
  '/var/lib/rpm',
  '/var/spool/cron',
]

/**
 * Directory names refused wherever they are, with everything inside them: `.ssh` holds
 * `authorized_keys`, which sshd trusts in any user's home (`/home/<user>/.ssh`, `/root/.ssh`,
 * a service account's `/var/lib/<name>/.ssh`).
 */
export const SYSTEM_DIRECTORY_NAMES: readonly string[] = ['.ssh']

/**
 * Directories refused themselves, though a directory of edgeop's own may lie below them (the
 * agent's default root, `/var/lib/edgeop/files`, is under `/var/lib`): managing files directly in
 * one of these would put edgeop's files among everyone else's.
 */
export const SYSTEM_DIRECTORIES: readonly string[] = [
  '/',
  '/home',
  '/media',
  '/mnt',
  '/opt',
  '/run',
  '/srv',
  '/tmp',
  '/var',
  '/var/cache',
  '/var/lib',
  '/var/log',
  '/var/run',
  '/var/spool',
  '/var/tmp',
]

/**
 * The system directory `dir` (an absolute, normalised path) is or lies in, or undefined: an entry
 * of {@link SYSTEM_DIRECTORIES} equal to `dir`, of {@link SYSTEM_TREES} equal to or above it, or
 * the nearest directory above it named as in {@link SYSTEM_DIRECTORY_NAMES}.
 *
 * @example
 * systemDirectoryOf('/etc/ssh')              // '/etc'
 * systemDirectoryOf('/var/lib')              // '/var/lib'
 * systemDirectoryOf('/home/edge/.ssh/keys')  // '/home/edge/.ssh'
 * systemDirectoryOf('/var/lib/edgeop/files') // undefined
 */
export function systemDirectoryOf(dir: string): string | undefined {
  if (SYSTEM_DIRECTORIES.includes(dir)) return dir
  const tree = SYSTEM_TREES.find((t) => dir === t || dir.startsWith(t + sep))
  if (tree !== undefined) return tree
  const segments = dir.split(sep)
  const at = segments.findIndex((s) => SYSTEM_DIRECTORY_NAMES.includes(s))
  return at < 0 ? undefined : segments.slice(0, at + 1).join(sep)
}
