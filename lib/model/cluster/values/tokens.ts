import { formatPath } from '../rules/format-path';

/**
 * CDK token shapes in a cluster object. CDK encodes a value it resolves only at synthesis as a string marker
 * (`${Token[AWS.AccountId.4]}`, a list as `#{Token[...]}`, a number as `-1.8881545897087626e+289` or a float64 with
 * marker bits; aws-cdk-lib core/lib/private/encoding.js). A cluster object is data: if one of its strings carried such
 * a marker, synthesis would resolve it into a CloudFormation intrinsic (a rule description that reads the account id,
 * a health-check path that is a Ref), or crash `cdk synth` with a message that names no file; and whether it crashes
 * depends on the token numbers of the process, so `validate` would accept or refuse the same object at random. They
 * are refused here, in every string (and map key) and number of the object, once, before the schema's own rules.
 */

/** The markers CDK's TokenString looks for, and its stringified-number pattern. */
const STRING_MARKERS = /\$\{Token\[|#\{Token\[|-1\.\d{10,16}e\+289/;
/** CDK's number tokens: a float64 whose upper 16 bits are these (createTokenDouble). */
const DOUBLE_MARKER_BITS = 0xfbff;

export const TOKEN_RULE =
  'synthesis would resolve it into a CloudFormation expression (or fail without naming this file); write the literal value';

export function tokenShape(v: unknown): string | undefined {
  if (typeof v === 'string') {
    const m = STRING_MARKERS.exec(v);
    return m ? `has the CDK token marker ${JSON.stringify(m[0])}` : undefined;
  }
  if (typeof v === 'number' && Number.isFinite(v)) {
    const view = new DataView(new ArrayBuffer(8));
    view.setFloat64(0, v);
    return view.getUint16(0) === DOUBLE_MARKER_BITS ? `${v} is a CDK number token` : undefined;
  }
  return undefined;
}

/** Every string, map key and number of the raw object that has a CDK token shape, by field path. */
export function tokenProblems(raw: unknown): Array<{ path: string; message: string }> {
  const out: Array<{ path: string; message: string }> = [];
  const walk = (v: unknown, at: PropertyKey[], depth: number) => {
    if (depth > 64) return; // YAML aliases are bounded by the parser; this only stops a pathological nesting
    const shape = tokenShape(v);
    if (shape) out.push({ path: formatPath(at), message: `${shape}; ${TOKEN_RULE}` });
    if (Array.isArray(v)) v.forEach((x, i) => walk(x, [...at, i], depth + 1));
    else if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        const keyShape = tokenShape(k);
        if (keyShape) out.push({ path: formatPath([...at, k]), message: `the key ${keyShape}; ${TOKEN_RULE}` });
        walk(x, [...at, k], depth + 1);
      }
    }
  };
  walk(raw, [], 0);
  return out;
}
