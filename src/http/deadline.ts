/**
 * `work`'s answer, or a rejection once `msMax` has passed without one: for the checks that
 * must not wait on a slow dependency (a Redis count on the request path, readiness probes).
 * `work` itself is not cancelled; its late answer is dropped.
 */
export async function withinMs<T>(work: Promise<T>, msMax: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          reject(new Error(`no answer within ${msMax} ms`));
        }, msMax);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
