/**
 * @module deployment-names — where the AppService operator runs and how the apiserver and scrapers reach it:
 * its namespace and name, ports, webhook Service, Secret and paths. The CRD (api.ts), the webhooks and
 * the manifests all name these, so they live apart from each.
 */

/** Namespace the operator runs in. */
export const OPERATOR_NAMESPACE = 'edgeop-system'
/** Name of its Deployment, ServiceAccount, roles and Lease. */
export const OPERATOR_NAME = 'edgeop-appservice'
/** Port of the HTTPS `/metrics` endpoint (kubebuilder's `config/default` serves secure metrics on 8443). */
export const METRICS_PORT = 8443
/** Port of the plain-HTTP probes (kubebuilder's `--health-probe-bind-address` default, 8081). */
export const PROBE_PORT = 8081
/** Port of the admission webhooks (controller-runtime's webhook server default, 9443). */
export const WEBHOOK_PORT = 9443
/** Service the apiserver calls the webhooks through; certificates are issued for `<this>.<namespace>.svc`. */
export const WEBHOOK_SERVICE = `${OPERATOR_NAME}-webhook`
/** Secret holding the operator's own webhook CA and serving certificate. */
export const WEBHOOK_SECRET = `${OPERATOR_NAME}-webhook-cert`
/** Path of the validating webhook. */
export const VALIDATE_PATH = '/validate-appservice'
/** Path of the mutating webhook. */
export const MUTATE_PATH = '/mutate-appservice'
/** Path of the CRD's conversion webhook. */
export const CONVERT_PATH = '/convert'
/**
 * How long the apiserver waits for a webhook: 5 s (the API default is 10). The handlers answer from
 * memory in well under a millisecond; a replica that does not answer in 5 s is gone, and with
 * `failurePolicy: Fail` every AppService write waits that long for it.
 */
export const WEBHOOK_TIMEOUT_SECONDS = 5
/**
 * The label of the operator's Namespace object (config/, deploy/): the webhooks skip the namespace that
 * carries it, whatever a kustomize overlay renames it to. Setting it needs `update` on Namespaces.
 */
export const OPERATOR_NAMESPACE_LABEL = 'edgeop.io/operator-namespace'
/** The ClusterRole scrapers are bound to; the node agent's manifests (deploy/agent/) ship the same one. */
export const METRICS_READER_ROLE = 'edgeop-metrics-reader'
/**
 * The namespace whose pods may scrape `/metrics` through the NetworkPolicies: `monitoring`, where the
 * Prometheus Operator's and kube-prometheus-stack's guides put Prometheus. Selected by
 * `kubernetes.io/metadata.name`, which the apiserver sets to the namespace's name, so no other
 * namespace can take the label.
 */
export const SCRAPER_NAMESPACE = 'monitoring'
