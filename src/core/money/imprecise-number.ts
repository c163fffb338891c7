/**
 * A JSON number literal with more than 15 significant digits, kept as the client wrote it. A
 * double cannot hold it exactly, so a JSON parser that made it a number would round it before
 * anyone could refuse it; the HTTP adapter's lossless parser hands it over as this instead,
 * and parseAmount refuses it. Pure data: the core only reads `literal`.
 */
export class ImpreciseNumber {
  constructor(readonly literal: string) {}

  toJSON(): string {
    return this.literal;
  }
}
