/**
 * @module main — the edgeop binary: `edgeop [run|check|agent|agent-aggregator|install|uninstall|migrate|crd|manifests|version] [flags]`.
 *
 * `run` (the default) runs the AppService operator and `agent` the NodeConfig node agent, both through
 * `edgeop/operator` (flags, logger, metrics, events, probes, leader election with `--leader-elect`,
 * graceful shutdown on SIGTERM/SIGINT, exit 1 when leadership is lost); this file only names them.
 */

import {
  defineCommand,
  imageReference,
  installCommands,
  migrateCommand,
  runCli,
  stringFlag,
} from './cli/index.ts'
import { toYaml } from './config/index.ts'
import { operatorCheckCommand, operatorCommand } from './operator/index.ts'
import {
  APPSERVICES,
  APPSERVICES_CRD,
  appServiceCrd,
  appServiceOperator,
  FIELD_MANAGER,
  operatorManifests,
} from './operators/appservice/index.ts'
import {
  NODECONFIGREPORTS,
  NODECONFIGS,
  nodeConfigAgentOperator,
  nodeConfigAggregatorOperator,
  nodeConfigCrd,
  nodeConfigReportCrd,
} from './operators/nodeconfig/index.ts'
import { VERSION } from './version.ts'

/** How to install what a missing-CRD error names: the CRDs alone, or everything the operator needs. */
const INSTALL_CRDS_HINT =
  '`edgeop crd | kubectl apply -f -` installs the CRDs (`edgeop manifests | kubectl apply -f -`: the whole operator)'
const run = { ...appServiceOperator, installHint: INSTALL_CRDS_HINT }

void runCli({
  name: 'edgeop',
  description: `edgeop ${VERSION}: the AppService operator on the edgeop runtime`,
  defaultCommand: 'run',
  commands: {
    run: operatorCommand(run, { version: VERSION }),
    check: operatorCheckCommand(run),
    agent: operatorCommand(
      { ...nodeConfigAgentOperator, installHint: INSTALL_CRDS_HINT },
      { version: VERSION },
    ),
    'agent-aggregator': operatorCommand(
      { ...nodeConfigAggregatorOperator, installHint: INSTALL_CRDS_HINT },
      { version: VERSION },
    ),
    // CRDs, then the Namespace, then the RBAC in it: what the operator needs besides its pods.
    ...installCommands({
      objects: () => {
        const m = operatorManifests()
        return [
          // Stores v1alpha1, the version the operator reads: `edgeop install` serves an operator run
          // outside the cluster (`npm start`), whose webhook no apiserver call reaches.
          appServiceCrd(),
          nodeConfigCrd(),
          nodeConfigReportCrd(),
          ...m['00-namespace.yaml']!,
          ...m['rbac.yaml']!,
        ]
      },
      customResources: [APPSERVICES, NODECONFIGS, NODECONFIGREPORTS],
      fieldManager: FIELD_MANAGER,
    }),
    migrate: migrateCommand({ crds: [APPSERVICES_CRD] }),
    crd: defineCommand({
      description:
        'Print the CustomResourceDefinitions (AppService, NodeConfig, NodeConfigReport), generated from their schemas; AppServices stored as v1alpha1, as `install` does, so no conversion webhook is needed (the shipped manifests store v1beta1)',
      flags: {},
      run: () =>
        void process.stdout.write(
          [appServiceCrd(), nodeConfigCrd(), nodeConfigReportCrd()].map((c) => toYaml(c)).join('---\n'),
        ),
    }),
    manifests: defineCommand({
      description:
        'Print every manifest the operator needs (namespace, CRD, RBAC, Deployment, PodDisruptionBudget, metrics Service, NetworkPolicy, webhooks)',
      flags: {
        image: stringFlag('Container image for the Deployment.', {
          default: `ghcr.io/example/edgeop:${VERSION}`,
          schema: imageReference(),
          placeholder: 'image',
        }),
      },
      run: (values) => {
        const files = operatorManifests(values.image)
        process.stdout.write(
          Object.values(files)
            .flat()
            .map((d) => toYaml(d))
            .join('---\n'),
        )
      },
    }),
    version: defineCommand({
      description: 'Print the version',
      flags: {},
      run: () =>
        void process.stdout.write(
          `edgeop ${VERSION} (node ${process.version}, ${process.platform}/${process.arch}${process.execArgv.length > 0 ? `, ${process.execArgv.join(' ')}` : ''})\n`,
        ),
    }),
  },
})
