/**
 * The stacks engine's front door: what the CLI uses of it.
 */
export { isPrincipalArn } from './bootstrap-roles';
