// Types for the two undici internal modules src/client/undici.ts imports (they ship no .d.ts).
declare module 'undici/lib/dispatcher/pool.js' {
  import { Pool } from 'undici'
  export default Pool
}
declare module 'undici/lib/api/api-request.js' {
  import type { Dispatcher } from 'undici'

  const request: (this: Dispatcher, options: Dispatcher.RequestOptions) => Promise<Dispatcher.ResponseData>
  export default request
}
