/**
 * The AppService controller suite (appservice.test.ts) again, with the controller's Deployments and Services listed
 * and watched in protobuf and kept in compact stores (the controller suites run against both stores and both
 * wire formats). The AppServices themselves are custom resources: JSON, in the compact store (the factory's
 * default for them, DEFAULT_JSON_STORE) in both runs.
 */
import { CHILD_WIRE_ENV } from '../support/appservice.ts'

process.env[CHILD_WIRE_ENV] = 'protobuf'
await import('./appservice.test.ts')
