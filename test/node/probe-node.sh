#!/usr/bin/env bash
# A probe of the real test node (test/integration/real-node.test.ts runs it and checks what it
# prints, with EDGEOP_NODE_THEN running test/node/chart-on-node.ts on the Ready node): inside a
# network and mount namespace of its own, it starts the project's control plane (cluster:up with
# a private state directory) with kube-controller-manager and kube-scheduler, containerd with the
# CRI and the CNI bridge, and kubelet, all built by build-binaries.sh; imports the images from dist/image and a pause image built here, with no
# registry; and runs two static pods: `edgeop version` with hostNetwork, and an idle container of
# the image with a pod IP and a 64Mi limit. It prints the timings, the Node's Ready condition, the
# pods' phases, the version line from the pod log and the pod cgroup's memory limit, then tears
# everything down. Needs root, `npm run build && npm run build:image`, curl and iproute2.
#
#   test/node/probe-node.sh [seconds to wait for Ready, default 90]
#   EDGEOP_NODE_PROBE_DIR=/dir   keep the work directory (logs) there instead of a fresh /tmp one
#
# What the namespace isolates, and why:
# - a veth pair inside it carries the node address 10.200.0.1/24 and a default route (kubelet
#   refuses a loopback node address; the kernel here has no dummy link type);
# - kubelet writes kernel-wide sysctls at start (kernel.panic, kernel.panic_on_oops,
#   vm.overcommit_memory, vm.panic_on_oom, kernel.keys.root_max*): plain files are bind-mounted
#   over them first, so its writes land there;
# - /run, /var/lib and /var/log are private tmpfs: the shim's sockets (/run/containerd), kubelet's
#   device-plugin socket (/var/lib/kubelet), libcni's cache (/var/lib/cni) and the container log
#   links (/var/log) go there whatever the configuration says.
# cgroups are not namespaced on cgroup v1: kubelet's kubepods tree is made in the machine's
# hierarchies, so it goes under a cgroup root of this run's own (kubelet's cgroupRoot), and the
# tear-down stops every pod and removes that tree.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
node_js="$repo/node_modules/.bin/node"
NODE_NAME=edgeop-node
NODE_IP=10.200.0.1
CGROUP_ROOT_NAME=edgeop-node-$$
POD_SUBNET=10.88.0.0/16

if [ "${EDGEOP_NODE_PROBE_INSIDE:-}" != 1 ]; then
  [ "$(id -u)" = 0 ] || { echo "probe-node: needs root (namespaces, cgroups)" >&2; exit 1; }
  [ -f "$repo/dist/image/index.json" ] || { echo "probe-node: no dist/image: run npm run build && npm run build:image" >&2; exit 1; }
  node_bin=$("$here/build-binaries.sh" | tail -n 1)
  cp_bin=$("$repo/test/controlplane/build-binaries.sh" | tail -n 1)
  umoci=$("$repo/build/tools/build-umoci.sh" | tail -n 1)
  helm=$("$repo/build/tools/build-go-tool.sh" helm | tail -n 1)
  work=${EDGEOP_NODE_PROBE_DIR:-$(mktemp -d /tmp/edgeop-node-probe-XXXXXX)}
  mkdir -p "$work"
  export EDGEOP_NODE_PROBE_INSIDE=1 node_bin cp_bin umoci helm work
  exec unshare --net --mount --propagation private -- "$0" "$@"
fi

wait_ready=${1:-90}
export PATH="$node_bin:$cp_bin:$PATH"
t0=$(date +%s%N)
say() { echo "probe-node: $(( ($(date +%s%N) - t0) / 1000000 )) ms: $*"; }
ctr_k8s() { ctr -a "$work/containerd.sock" -n k8s.io "$@"; }

kubelet_pid='' containerd_pid='' kcm_pid='' scheduler_pid='' proxy_pid=''
teardown() {
  set +e
  for p in $kcm_pid $scheduler_pid $proxy_pid; do kill "$p"; wait "$p"; done 2>/dev/null
  if [ -n "$kubelet_pid" ]; then
    # kubelet stops the static pods whose manifests go (grace period 1 s).
    rm -f "$work"/manifests/*.yaml
    for _ in $(seq 60); do [ -z "$(ctr_k8s tasks list --quiet 2>/dev/null)" ] && break; sleep 0.5; done
    kill "$kubelet_pid"; wait "$kubelet_pid"
  fi
  if [ -n "$containerd_pid" ]; then
    # Whatever is left (the sandboxes): killed and removed, so that their shims exit.
    for t in $(ctr_k8s tasks list --quiet 2>/dev/null); do ctr_k8s tasks delete --force "$t" >/dev/null; done
    for c in $(ctr_k8s containers list --quiet 2>/dev/null); do ctr_k8s containers delete "$c" >/dev/null; done
    kill "$containerd_pid"; wait "$containerd_pid"
  fi
  for h in /sys/fs/cgroup/*/ /sys/fs/cgroup/; do
    [ -d "$h$CGROUP_ROOT_NAME" ] && find "$h$CGROUP_ROOT_NAME" -depth -type d -exec rmdir {} + 2>/dev/null
  done
  (cd "$repo" && EDGEOP_BUILD_CACHE_DIR="$work/cache" "$node_js" test/controlplane/cli.ts down >"$work/down.log" 2>&1)
  say "torn down (logs in $work)"
}
trap teardown EXIT

ip link set lo up
ip link add node0 type veth peer name node0-peer
ip addr add "$NODE_IP/24" dev node0
ip link set node0 up && ip link set node0-peer up
ip route add default via 10.200.0.254 dev node0 onlink
mkdir -p "$work/sysctl"
for k in kernel/panic kernel/panic_on_oops vm/overcommit_memory vm/panic_on_oom kernel/keys/root_maxkeys kernel/keys/root_maxbytes; do
  f="$work/sysctl/${k//\//.}"
  cat "/proc/sys/$k" >"$f" && mount --bind "$f" "/proc/sys/$k"
done
# kubelet's cgroup root must exist in every hierarchy it uses.
for h in /sys/fs/cgroup/*/; do [ -f "${h}cgroup.procs" ] && mkdir -p "$h$CGROUP_ROOT_NAME"; done
[ -f /sys/fs/cgroup/cgroup.controllers ] && mkdir -p "/sys/fs/cgroup/$CGROUP_ROOT_NAME"
for d in /run /var/lib /var/log; do mount -t tmpfs -o mode=755 tmpfs "$d"; done
mkdir -p /run/containerd /var/lib/kubelet /var/lib/cni /var/log/pods /var/log/containers
say "namespace ready, cgroup root /$CGROUP_ROOT_NAME"

# The control plane: the project's own, its state in the work directory. Two flags of a real
# cluster's: ServiceAccount admission back on (pods get their projected token), and aggregator
# routing, so that the apiserver calls a webhook Service's endpoints (pod IPs on the bridge) as
# kube-proxy would route it: there is no kube-proxy here (no iptables binary on these machines).
(cd "$repo" && EDGEOP_BUILD_CACHE_DIR="$work/cache" EDGEOP_TEST_ASSETS="$cp_bin" "$node_js" test/controlplane/cli.ts up \
  --apiserver-arg=--disable-admission-plugins= --apiserver-arg=--enable-aggregator-routing=true >"$work/up.log" 2>&1)
cpw="$work/cache/cluster/work"
kubeconfig="$cpw/admin.kubeconfig"
server=$(sed -n 's/^ *server: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$kubeconfig" | head -n 1)
api() { curl -sS --cacert "$cpw/pki/ca.crt" --cert "$cpw/pki/admin.crt" --key "$cpw/pki/admin.key" "$server$1"; }
json() { "$node_js" -e "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>{const o=JSON.parse(s);console.log(($1)(o))})"; }
say "control plane up at $server"

# kube-controller-manager and kube-scheduler, for Deployments, ServiceAccounts, the root CA
# ConfigMap and EndpointSlices; no serving port (nothing scrapes them).
kube-controller-manager --kubeconfig="$kubeconfig" --authentication-kubeconfig="$kubeconfig" \
  --authorization-kubeconfig="$kubeconfig" --leader-elect=false --secure-port=0 \
  --use-service-account-credentials=false --root-ca-file="$cpw/pki/ca.crt" \
  --service-account-private-key-file="$cpw/pki/sa.key" >"$work/kube-controller-manager.log" 2>&1 &
kcm_pid=$!
kube-scheduler --kubeconfig="$kubeconfig" --authentication-kubeconfig="$kubeconfig" \
  --authorization-kubeconfig="$kubeconfig" --leader-elect=false --secure-port=0 >"$work/kube-scheduler.log" 2>&1 &
scheduler_pid=$!
# Pods reach the apiserver by the `kubernetes` Service (10.0.0.1:443, in the apiserver's
# certificate): that address on the node's loopback, piped to the apiserver.
ip addr add 10.0.0.1/32 dev lo
"$node_js" "$here/service-proxy.ts" 10.0.0.1:443 "${server#https://}" >"$work/service-proxy.log" 2>&1 &
proxy_pid=$!
say "controller manager, scheduler and the kubernetes Service's route started"

# The pause image: a static Go binary, packed with umoci as user 65535.
mkdir -p "$work/pause/rootfs"
(cd "$here/go/pause" && CGO_ENABLED=0 GOTOOLCHAIN=local go build -trimpath -ldflags "-s -w" -o "$work/pause/rootfs/pause" .)
"$umoci" init --layout "$work/pause/layout"
"$umoci" new --image "$work/pause/layout:3.10"
"$umoci" insert --image "$work/pause/layout:3.10" "$work/pause/rootfs" /
"$umoci" config --image "$work/pause/layout:3.10" --config.user=65535:65535 --config.entrypoint=/pause \
  --platform.os=linux --platform.arch="$(go env GOARCH)"
tar -C "$work/pause/layout" -cf "$work/pause.tar" .
tar -C "$repo/dist/image" -cf "$work/edgeop-oci.tar" .

mkdir -p "$work/cni"
cat >"$work/cni/10-bridge.conflist" <<CNI
{"cniVersion": "1.0.0", "name": "edgeop-test", "plugins": [
  {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": "$POD_SUBNET"}]], "routes": [{"dst": "0.0.0.0/0"}]}},
  {"type": "portmap", "capabilities": {"portMappings": true}}]}
CNI
# restrict_oom_score_adj: without CAP_SYS_RESOURCE runc cannot set a negative oom_score_adj, and
# every sandbox would fail ("can't get final child's PID from pipe: EOF").
cat >"$work/containerd.toml" <<TOML
version = 3
root = "$work/containerd/root"
state = "$work/containerd/state"
disabled_plugins = ["io.containerd.nri.v1.nri"]
[grpc]
  address = "$work/containerd.sock"
[ttrpc]
  address = "$work/containerd.sock.ttrpc"
[plugins."io.containerd.cri.v1.images".pinned_images]
  sandbox = "localhost/pause:3.10"
[plugins."io.containerd.cri.v1.runtime"]
  restrict_oom_score_adj = true
  disable_hugetlb_controller = true
  netns_mounts_under_state_dir = true
[plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"
[plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
  BinaryName = "$node_bin/runc"
  SystemdCgroup = false
[plugins."io.containerd.cri.v1.runtime".cni]
  bin_dirs = ["$node_bin/cni"]
  conf_dir = "$work/cni"
TOML
containerd --config "$work/containerd.toml" >"$work/containerd.log" 2>&1 &
containerd_pid=$!
for _ in $(seq 300); do [ -S "$work/containerd.sock" ] && break; sleep 0.2; done
say "containerd up"
ctr_k8s images import --base-name localhost/edgeop "$work/edgeop-oci.tar" >"$work/import.log"
ctr_k8s images import --base-name localhost/pause "$work/pause.tar" >>"$work/import.log"
# The chart's default image reference names the node image of this machine's architecture, so
# `helm install` with the chart's defaults finds it present (pullPolicy IfNotPresent, no registry).
chart_image="$(sed -n 's/^  repository: //p' "$repo/charts/edgeop/values.yaml" | head -n 1):$(sed -n 's/^appVersion: "\(.*\)"$/\1/p' "$repo/charts/edgeop/Chart.yaml")"
ctr_k8s images tag "localhost/edgeop:node-linux-$(go env GOARCH)" "$chart_image" >>"$work/import.log"
say "images imported: $(ctr_k8s images list --quiet | tr '\n' ' ')"

mkdir -p "$work/manifests"
security='{readOnlyRootFilesystem: true, runAsUser: 65532, runAsGroup: 65532, allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}'
cat >"$work/manifests/edgeop-version.yaml" <<POD
apiVersion: v1
kind: Pod
metadata: {name: edgeop-version, namespace: default}
spec:
  hostNetwork: true
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  containers:
    - {name: edgeop, image: "localhost/edgeop:node-linux-amd64", imagePullPolicy: Never, args: [version],
       securityContext: $security, resources: {limits: {memory: 384Mi}}}
POD
cat >"$work/manifests/edgeop-idle.yaml" <<POD
apiVersion: v1
kind: Pod
metadata: {name: edgeop-idle, namespace: default}
spec:
  terminationGracePeriodSeconds: 1
  containers:
    - {name: edgeop, image: "localhost/edgeop:node-linux-amd64", imagePullPolicy: Never,
       command: [/nodejs/bin/node, -e, "process.on('SIGTERM', () => process.exit(0)); setInterval(() => {}, 1000)"],
       securityContext: $security, resources: {limits: {memory: 64Mi}}}
POD
# failCgroupV1: false — these machines run cgroup v1 (hybrid), which kubelet 1.35+ refuses unless
# told otherwise. Anonymous AlwaysAllow is for this probe only.
cat >"$work/kubelet.yaml" <<CFG
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: /$CGROUP_ROOT_NAME
containerRuntimeEndpoint: unix://$work/containerd.sock
staticPodPath: $work/manifests
failSwapOn: false
address: $NODE_IP
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
podLogsDir: $work/pod-logs
authentication: {anonymous: {enabled: true}, webhook: {enabled: false}}
authorization: {mode: AlwaysAllow}
evictionHard: {memory.available: 100Mi, nodefs.available: 2%, imagefs.available: 2%}
CFG
arch=$(dpkg --print-architecture 2>/dev/null || echo amd64)
[ "$arch" = amd64 ] || sed -i "s/node-linux-amd64/node-linux-$arch/" "$work"/manifests/*.yaml
kubelet --config "$work/kubelet.yaml" --kubeconfig "$kubeconfig" --root-dir "$work/kubelet" \
  --cert-dir "$work/kubelet-pki" --node-ip "$NODE_IP" --hostname-override "$NODE_NAME" >"$work/kubelet.log" 2>&1 &
kubelet_pid=$!
say "kubelet started"

ready=''
for _ in $(seq $((wait_ready * 2))); do
  ready=$(api "/api/v1/nodes/$NODE_NAME" 2>/dev/null | json "o => (o.status?.conditions ?? []).find(c => c.type === 'Ready')?.status ?? ''" 2>/dev/null || true)
  [ "$ready" = True ] && break
  sleep 0.5
done
say "node $NODE_NAME Ready=$ready"
for _ in $(seq 60); do
  phases=$(api "/api/v1/namespaces/default/pods" | json "o => o.items.map(p => p.metadata.name + '=' + p.status.phase + '@' + (p.status.podIP ?? '-')).join(' ')")
  case "$phases" in *edgeop-version-$NODE_NAME=Succeeded*edgeop-idle*=Running*|*edgeop-idle*=Running*edgeop-version-$NODE_NAME=Succeeded*) break ;; esac
  sleep 0.5
done
say "pods: $phases"
say "version pod's log: $(cat "$work"/pod-logs/default_edgeop-version-*/edgeop/0.log 2>/dev/null)"
for f in /sys/fs/cgroup/memory/$CGROUP_ROOT_NAME/kubepods/*/pod*/memory.limit_in_bytes /sys/fs/cgroup/$CGROUP_ROOT_NAME/kubepods*/*/pod*/memory.max; do
  if [ -f "$f" ]; then say "pod cgroup $(dirname "$f" | sed "s|.*/$CGROUP_ROOT_NAME/||"): memory limit $(cat "$f")"; fi
done

# EDGEOP_NODE_THEN: a command run on the Ready node (from the repository, with KUBECONFIG, HELM,
# EDGEOP_NODE_IP, EDGEOP_NODE_CGROUP_ROOT, EDGEOP_NODE_CONTAINERD, EDGEOP_NODE_WORK and
# EDGEOP_NODE_SERVICE_PROXY_PID set); the probe exits with its status.
then_rc=0
if [ -n "${EDGEOP_NODE_THEN:-}" ]; then
  say "running $EDGEOP_NODE_THEN"
  (cd "$repo" && KUBECONFIG="$kubeconfig" HELM="$helm" EDGEOP_NODE_CGROUP_ROOT="/$CGROUP_ROOT_NAME" \
    EDGEOP_NODE_SERVICE_PROXY_PID="$proxy_pid" EDGEOP_NODE_IP="$NODE_IP" \
    EDGEOP_NODE_CONTAINERD="$work/containerd.sock" EDGEOP_NODE_WORK="$work" PATH="$PATH" \
    bash -c "$EDGEOP_NODE_THEN") || then_rc=$?
  say "$EDGEOP_NODE_THEN exited $then_rc"
fi
exit "$then_rc"
