/**
 * @module protobuf-types — the built-in resource types of `CORE_TYPES` that also carry their protobuf kind.
 *
 * A list or watch of one of these asks for protobuf, client-go's default wire for built-in kinds, and the
 * informer factory keeps its objects in the compact store (`DEFAULT_PROTOBUF_STORE`). Each is a constant of
 * its own, not a property of one object, so a bundle carries the generated tables of the types it imports
 * and no other (test/client/protobuf-types.test.ts checks it): a program that uses only `CORE_TYPES` carries
 * none. CustomResourceDefinitions have no table and stay JSON.
 */
import type {
  ConfigMap,
  Deployment,
  Event,
  Lease,
  Namespace,
  Node,
  Pod,
  Secret,
  Service,
} from '../api/index.ts'
import {
  CONFIG_MAP_V1,
  DEPLOYMENT_V1,
  EVENT_V1,
  LEASE_V1,
  NAMESPACE_V1,
  NODE_V1,
  POD_V1,
  SECRET_V1,
  SERVICE_V1,
} from '../codec/protobuf/kinds.generated.ts'
import type { ResourceType } from './resource.ts'

/** `v1` Namespace (cluster-scoped), read in protobuf. */
export const PROTOBUF_NAMESPACES: ResourceType<Namespace> = {
  group: '',
  version: 'v1',
  resource: 'namespaces',
  namespaced: false,
  kind: 'Namespace',
  protobuf: NAMESPACE_V1,
}
/** `v1` ConfigMap, read in protobuf. */
export const PROTOBUF_CONFIG_MAPS: ResourceType<ConfigMap> = {
  group: '',
  version: 'v1',
  resource: 'configmaps',
  namespaced: true,
  kind: 'ConfigMap',
  protobuf: CONFIG_MAP_V1,
}
/** `v1` Secret, read in protobuf. */
export const PROTOBUF_SECRETS: ResourceType<Secret> = {
  group: '',
  version: 'v1',
  resource: 'secrets',
  namespaced: true,
  kind: 'Secret',
  protobuf: SECRET_V1,
}
/** `v1` Service, read in protobuf. */
export const PROTOBUF_SERVICES: ResourceType<Service> = {
  group: '',
  version: 'v1',
  resource: 'services',
  namespaced: true,
  kind: 'Service',
  protobuf: SERVICE_V1,
}
/** `v1` Pod, read in protobuf. */
export const PROTOBUF_PODS: ResourceType<Pod> = {
  group: '',
  version: 'v1',
  resource: 'pods',
  namespaced: true,
  kind: 'Pod',
  protobuf: POD_V1,
}
/** `v1` Node (cluster-scoped), read in protobuf. */
export const PROTOBUF_NODES: ResourceType<Node> = {
  group: '',
  version: 'v1',
  resource: 'nodes',
  namespaced: false,
  kind: 'Node',
  protobuf: NODE_V1,
}
/** `apps/v1` Deployment, read in protobuf. */
export const PROTOBUF_DEPLOYMENTS: ResourceType<Deployment> = {
  group: 'apps',
  version: 'v1',
  resource: 'deployments',
  namespaced: true,
  kind: 'Deployment',
  protobuf: DEPLOYMENT_V1,
}
/** `coordination.k8s.io/v1` Lease, read in protobuf. */
export const PROTOBUF_LEASES: ResourceType<Lease> = {
  group: 'coordination.k8s.io',
  version: 'v1',
  resource: 'leases',
  namespaced: true,
  kind: 'Lease',
  protobuf: LEASE_V1,
}
/** `events.k8s.io/v1` Event, read in protobuf. */
export const PROTOBUF_EVENTS: ResourceType<Event> = {
  group: 'events.k8s.io',
  version: 'v1',
  resource: 'events',
  namespaced: true,
  kind: 'Event',
  protobuf: EVENT_V1,
}
