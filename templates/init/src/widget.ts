/**
 * A Widget custom resource and its controller: for each Widget, a ConfigMap of the same name holding
 * its message, owned by the Widget (so deleting the Widget deletes the ConfigMap), and the ConfigMap's
 * name in the Widget's status.
 */
import {
  applyIfDrifted,
  CORE_TYPES,
  customResourceDefinition,
  type KubeObject,
  type Manager,
  type ResourceType,
  updateStatusIfChanged,
  withControllerReference,
} from 'edgeop'
import type { ControllerOptions } from 'edgeop/controller'
import type { RbacRule } from 'edgeop/operator'
import * as z from 'zod/mini'

/** The Widget's spec: the TypeScript type and the CRD's OpenAPI schema both come from it. */
export const WidgetSpec = z.object({
  message: z.string().check(z.minLength(1)),
})

/** The Widget's status, written by the controller. */
export const WidgetStatus = z.object({
  configMap: z.optional(z.string()),
})

/** A Widget object. */
export interface Widget extends KubeObject {
  spec: z.infer<typeof WidgetSpec>
  status?: z.infer<typeof WidgetStatus>
}

/** Where Widgets are served. */
export const WIDGETS: ResourceType = {
  group: 'example.com',
  version: 'v1alpha1',
  resource: 'widgets',
  namespaced: true,
  kind: 'Widget',
}

/** The CustomResourceDefinition, generated from the schemas (`npm run manifests` prints it). */
export const widgetCrd = customResourceDefinition({
  group: WIDGETS.group,
  version: WIDGETS.version,
  kind: 'Widget',
  plural: 'widgets',
  singular: 'widget',
  scope: 'Namespaced',
  spec: WidgetSpec,
  status: WidgetStatus,
})

/**
 * What the controller calls, as RBAC rules: `check` verifies them and `manifests` grants exactly
 * these. A call not listed here is Forbidden in the cluster, so add its rule with the call.
 */
export const WIDGET_RULES: RbacRule[] = [
  { apiGroups: [WIDGETS.group], resources: ['widgets'], verbs: ['get', 'list', 'watch'] },
  { apiGroups: [WIDGETS.group], resources: ['widgets/status'], verbs: ['patch'] },
  // The ConfigMap's owner reference blocks the Widget's deletion until it is gone, which needs this.
  { apiGroups: [WIDGETS.group], resources: ['widgets/finalizers'], verbs: ['update'] },
  { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch', 'create', 'patch'] },
]

/** The label on every ConfigMap the controller writes (its informer watches only those). */
const WIDGET_LABEL = 'example.com/widget'

/** The controller, on `manager`'s informers: return it from runOperator's `controllers`, or `manager.add` it. */
export function widgetController(manager: Manager): ControllerOptions<Widget> {
  const widgets = manager.factory.informer<Widget>({ type: WIDGETS })
  const configMaps = manager.factory.informer({ type: CORE_TYPES.configMaps, labelSelector: WIDGET_LABEL })
  return {
    name: 'widget',
    for: { source: widgets, kind: 'Widget', group: WIDGETS.group, namespaced: true },
    owns: [{ source: configMaps }], // a change to a ConfigMap wakes its Widget
    async reconcile({ namespace, name }, { signal }) {
      const widget = widgets.store.get(`${namespace}/${name}`)
      if (!widget) return // deleted: the garbage collector removes the ConfigMap it owned
      const desired = withControllerReference(widget, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name, namespace, labels: { [WIDGET_LABEL]: name } },
        data: { message: widget.spec.message },
      })
      // Server-side apply, only when what the cache holds differs from what we want.
      const cached = configMaps.store.get(`${namespace}/${name}`)
      await applyIfDrifted(
        manager.client.resource(CORE_TYPES.configMaps, namespace),
        desired,
        cached,
        'widget',
        signal,
      )
      await updateStatusIfChanged(
        manager.client.resource<Widget>(WIDGETS, namespace),
        widget,
        { configMap: name },
        signal,
      )
    },
  }
}
