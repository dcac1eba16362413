// Build-only module: the pod sandbox ("pause") image of the real test node
// (test/node/probe-node.sh). No dependencies.
module edgeop.test/pause

go 1.26.0
