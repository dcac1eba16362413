/**
 * End to end, installed from deploy/: the operator as deploy/'s ServiceAccount under exactly
 * deploy/'s RBAC, with deploy/deployment.yaml's args (a Lease name and timings of this run's own).
 * The suite itself is test/support/e2e-appservice.ts; e2e-appservice-helm.test.ts runs it with the
 * operator installed by Helm.
 */
import { appServiceE2eSuite } from '../support/e2e-appservice.ts'
import { installFromDeploy } from '../support/operator-install.ts'

appServiceE2eSuite(installFromDeploy)
