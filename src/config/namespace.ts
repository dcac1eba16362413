/**
 * @module namespace — the namespace used when neither the context nor the pod names one.
 */

/** `default`, as client-go `clientcmd` (`DirectClientConfig.Namespace`) and kubectl use when a context sets none. */
export const DEFAULT_NAMESPACE = 'default'
