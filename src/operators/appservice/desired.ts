/**
 * @module desired — the children an AppService should have. Pure: no I/O.
 */

import type { Deployment, Service } from '../../api/index.ts'
import { withControllerReference } from '../../objects/index.ts'
import type { AppService, AppServiceSpec } from './api.ts'

/** Label selecting an AppService's pods. */
export const APP_LABEL = 'platform.example.com/appservice'
/** Standard labels on every child. */
export const MANAGED_BY = { 'app.kubernetes.io/managed-by': 'edgeop' } as const
/** Label selector matching every child this operator manages (its informers cache only these). */
export const CHILD_SELECTOR = 'app.kubernetes.io/managed-by=edgeop'

function labels(app: AppService): Record<string, string> {
  return { 'app.kubernetes.io/name': app.metadata.name!, ...MANAGED_BY, [APP_LABEL]: app.metadata.name! }
}

/** A child's metadata: its labels, plus the AppService's `shardLabel` when given (not on pods: a handover must not restart them). */
const meta = (app: AppService, shardLabel?: string) => ({
  name: app.metadata.name,
  namespace: app.metadata.namespace,
  labels: {
    ...labels(app),
    ...(shardLabel ? { [shardLabel]: app.metadata.labels?.[shardLabel] ?? '' } : {}),
  },
})

/** The Deployment (same name as the AppService); `shardLabel` as for the Service. */
export function desiredDeployment(app: AppService, spec: AppServiceSpec, shardLabel?: string): Deployment {
  return withControllerReference(app, {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: meta(app, shardLabel),
    spec: {
      replicas: spec.replicas,
      selector: { matchLabels: { [APP_LABEL]: app.metadata.name! } },
      template: {
        metadata: { labels: labels(app) },
        spec: {
          containers: [
            { name: 'app', image: spec.image, ports: [{ name: 'http', containerPort: spec.port }] },
          ],
        },
      },
    },
  })
}

/** The Service (same name as the AppService); with `shardLabel`, it carries the AppService's value of that label. */
export function desiredService(app: AppService, spec: AppServiceSpec, shardLabel?: string): Service {
  return withControllerReference(app, {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: meta(app, shardLabel),
    spec: {
      selector: { [APP_LABEL]: app.metadata.name! },
      ports: [{ name: 'http', port: spec.port, targetPort: spec.port }],
    },
  })
}

/** `status.selector` (for the scale subresource). */
export function selectorOf(app: AppService): string {
  return `${APP_LABEL}=${app.metadata.name}`
}

/** `status.endpoint`: the in-cluster URL. */
export function endpointOf(app: AppService, spec: AppServiceSpec): string {
  return `http://${app.metadata.name}.${app.metadata.namespace}.svc:${spec.port}`
}

/**
 * The external database entry's idempotency key: derived from the object's UID, stable across
 * retries; a member cluster's name comes first, so that objects of clusters restored from one backup
 * (same UIDs) or same-named ones never share an entry. The home cluster's key has no cluster.
 */
export function databaseKey(app: AppService, cluster?: string): string {
  return `appsrv-${cluster ? `${cluster}-` : ''}${app.metadata.uid}`
}
