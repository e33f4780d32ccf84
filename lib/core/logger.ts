/**
 * The subset of pino that lib/ logs through; tests pass a recorder. In core because every layer logs: the rollout
 * engine and the reconciler both take one, and neither may import the other's types for it.
 */
export interface Logger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
  child(bindings: object): Logger;
}
