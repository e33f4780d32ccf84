/**
 * The deploy engine's front door: deploying and deleting stacks, the one path below the reconciler that the
 * reconciler, `bootstrap` and `delete` all take (issue 34: the CLI only parses and prints).
 */
export { deployBootstrapStack } from './bootstrap-deploy';
export { type ConfigObjectsDeleted, deleteClusterConfigObjects, deleteStackAndWait, teardownOrder } from './teardown';
