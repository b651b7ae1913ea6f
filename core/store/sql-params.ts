// Parameters of a statement composed from fragments owned by different modules
// (an append to the journal and the outbox deliveries it announces, say): each
// fragment adds its values and writes the placeholders it is given back.
export class SqlParams {
  readonly values: unknown[] = [];

  /** Adds a value and answers its placeholder (`$n`, with `::cast` when given). */
  add(value: unknown, cast?: string): string {
    this.values.push(value);
    return `$${this.values.length}${cast ? `::${cast}` : ''}`;
  }
}
