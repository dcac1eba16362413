/**
 * The operator binary: `run` (the default), `check` (are the CRD and the RBAC there?) and `manifests`
 * (everything to `kubectl apply`), with controller-runtime's flags (`--help` lists them).
 */
import { runOperator } from 'edgeop/operator'
import { WIDGET_RULES, widgetController, widgetCrd } from './widget.ts'

await runOperator({
  name: '{{name}}',
  crds: [widgetCrd],
  check: { rules: WIDGET_RULES },
  controllers: ({ manager }) => [widgetController(manager)],
})
