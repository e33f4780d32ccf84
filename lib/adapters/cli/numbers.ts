import { InvalidArgumentError } from 'commander';

/**
 * Commander parser for a whole number flag: `--concurrency abc` is a usage
 * error (exit 2) with the flag named, never a NaN that quietly does nothing.
 */
export function wholeNumber(min: number, max = Number.MAX_SAFE_INTEGER): (value: string) => number {
  return (value: string) => {
    const n = Number(value);
    if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < min || n > max) {
      throw new InvalidArgumentError(
        `${JSON.stringify(value)} is not a whole number from ${min} to ${max === Number.MAX_SAFE_INTEGER ? 'up' : max}.`,
      );
    }
    return n;
  };
}

/** Commander parser for a rate flag (`--cfn-read-qps`): a number of requests per second above 0, fractions allowed. */
export function requestsPerSecond(max: number): (value: string) => number {
  return (value: string) => {
    const n = Number(value);
    if (!/^\d+(\.\d+)?$/.test(value.trim()) || !(n > 0) || n > max) {
      throw new InvalidArgumentError(
        `${JSON.stringify(value)} is not a number of requests per second above 0 and at most ${max} (0.5 is one every two seconds).`,
      );
    }
    return n;
  };
}
