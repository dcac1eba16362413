/**
 * @module service-proxy — the real node's one Service route: TCP from `listen` (the `kubernetes`
 * Service's ClusterIP and port, an address of the node's namespace) piped to `target` (the test
 * apiserver on the node's loopback), as kube-proxy's userspace mode did. This sandbox has no
 * iptables binary for kube-proxy, and pods reach the apiserver only by the Service their
 * in-cluster configuration names (`KUBERNETES_SERVICE_HOST`).
 *
 *   node test/node/service-proxy.ts 10.0.0.1:443 127.0.0.1:6443
 */
import { connect, createServer } from 'node:net'

const split = (hostPort: string): [string, number] => {
  const i = hostPort.lastIndexOf(':')
  return [hostPort.slice(0, i), Number(hostPort.slice(i + 1))]
}
const [listenHost, listenPort] = split(process.argv[2] ?? '')
const [targetHost, targetPort] = split(process.argv[3] ?? '')
if (!listenHost || !listenPort || !targetHost || !targetPort) {
  process.stderr.write('usage: service-proxy.ts <listen host:port> <target host:port>\n')
  process.exit(2)
}

const server = createServer((client) => {
  const upstream = connect(targetPort, targetHost)
  client.pipe(upstream).pipe(client)
  const close = () => {
    client.destroy()
    upstream.destroy()
  }
  client.on('error', close)
  upstream.on('error', close)
})
server.listen(listenPort, listenHost, () =>
  process.stdout.write(`service-proxy: ${process.argv[2]} → ${process.argv[3]}\n`),
)
// The pods' watches never end by themselves: stop at once rather than wait for them.
process.on('SIGTERM', () => process.exit(0))
