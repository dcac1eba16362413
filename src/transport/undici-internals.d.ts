// Types for the three undici internal modules src/transport/undici.ts imports (they ship no .d.ts).
declare module 'undici/lib/dispatcher/pool.js' {
  import { Pool } from 'undici'
  export default Pool
}
declare module 'undici/lib/api/api-request.js' {
  import type { Dispatcher } from 'undici'

  const request: (this: Dispatcher, options: Dispatcher.RequestOptions) => Promise<Dispatcher.ResponseData>
  export default request
}
declare module 'undici/lib/core/connect.js' {
  import type { Socket } from 'node:net'
  import type { buildConnector } from 'undici'

  /** Unlike undici's published type, the connector returns the socket it opens. */
  const build: (
    options: buildConnector.BuildOptions,
  ) => (
    options: buildConnector.Options,
    callback: (err: Error | null, socket: Socket | null) => void,
  ) => Socket | undefined
  export default build
}
