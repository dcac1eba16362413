/**
 * End to end, installed by Helm: `helm install` of charts/edgeop into the real apiserver (values:
 * the suite's Lease timings, `watchNamespaces`, `--database-api` through `extraArgs`), the operator
 * run as the chart's ServiceAccount with the installed Deployment's args; the release is uninstalled
 * at the end. The suite itself is test/support/e2e-appservice.ts, shared with e2e-appservice.test.ts.
 */
import { appServiceE2eSuite } from '../support/e2e-appservice.ts'
import { installWithHelm } from '../support/operator-install.ts'

appServiceE2eSuite(installWithHelm)
