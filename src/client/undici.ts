/**
 * @module undici — the single place edgeop imports undici from.
 *
 * Keeping every undici import here lets the artifact build swap the package entry
 * (which pulls in fetch, WebSocket, mocks and caches) for the few internal modules
 * the client uses, without touching the rest of the code.
 */

export type { Dispatcher } from 'undici'
export { Pool } from 'undici'
