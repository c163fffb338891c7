/**
 * The fleet tests' load balancer: requests spread over a fleet's API processes in turn. A
 * process can be taken out of rotation (no new request goes to it; `drained` waits for those
 * it still answers, as a load balancer drains a backend before it is stopped) and put back,
 * at the same or a new address. A request never throws: a connection that failed (a process
 * killed under it) is an outcome of its own, so a test can tell answered from unanswered.
 */
export type Outcome =
  | {
      readonly answered: true;
      readonly member: number;
      readonly status: number;
      readonly body: Record<string, unknown>;
    }
  | { readonly answered: false; readonly member: number; readonly error: string };

interface Member {
  base: string;
  inRotation: boolean;
  inFlight: number;
}

/** The members a round robin holds, at most (a fleet of this machine is a handful). */
const MEMBERS_MAX = 16;

export class RoundRobin {
  readonly #members: Member[];
  #next = 0;

  constructor(bases: readonly string[]) {
    if (bases.length < 1 || bases.length > MEMBERS_MAX)
      throw new Error(`a round robin of 1 to ${MEMBERS_MAX} members, not ${bases.length}`);
    this.#members = bases.map((base) => ({ base, inRotation: true, inFlight: 0 }));
  }

  get size(): number {
    return this.#members.length;
  }

  /** The members in rotation now, by index. */
  inRotation(): number[] {
    return this.#members.flatMap((member, index) => (member.inRotation ? [index] : []));
  }

  /** The next member in rotation; throws when none is (every request would fail). */
  #pick(): number {
    for (let step = 0; step < this.#members.length; step++) {
      const index = (this.#next + step) % this.#members.length;
      if (this.#memberAt(index).inRotation) {
        this.#next = index + 1;
        return index;
      }
    }
    throw new Error('no API process is in rotation');
  }

  #memberAt(index: number): Member {
    const member = this.#members[index];
    if (member === undefined) throw new Error(`no member ${index} in the round robin`);
    return member;
  }

  /** No new request goes to member `index` until it is put back. */
  takeOut(index: number): void {
    this.#memberAt(index).inRotation = false;
  }

  /** Member `index` takes requests again, at `base` when it moved. */
  putBack(index: number, base?: string): void {
    const member = this.#memberAt(index);
    if (base !== undefined) member.base = base;
    member.inRotation = true;
  }

  /** Resolves once member `index` answers no request; throws after `timeoutMs`. */
  async drained(index: number, timeoutMs: number): Promise<void> {
    const member = this.#memberAt(index);
    const deadline = Date.now() + timeoutMs;
    while (member.inFlight > 0) {
      if (Date.now() > deadline)
        throw new Error(
          `member ${index} still answered ${member.inFlight} requests after ${timeoutMs} ms`,
        );
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  /** One request to the next member in rotation. */
  send(key: string, method: string, path: string, body?: unknown): Promise<Outcome> {
    return this.sendTo(this.#pick(), key, method, path, body);
  }

  /** One request to member `index`, in rotation or not (a test aiming at one process). */
  async sendTo(
    index: number,
    key: string,
    method: string,
    path: string,
    body?: unknown,
  ): Promise<Outcome> {
    const member = this.#memberAt(index);
    member.inFlight += 1;
    try {
      const response = await fetch(`${member.base}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${key}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      return { answered: true, member: index, status: response.status, body: parsed(text) };
    } catch (error) {
      return { answered: false, member: index, error: describe(error) };
    } finally {
      member.inFlight -= 1;
    }
  }
}

function parsed(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
  } catch {
    return { unparsed: text.slice(0, 200) };
  }
}

/** A failed fetch's reason: undici puts the socket's error in `cause`. */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error.message}${cause}`;
}
