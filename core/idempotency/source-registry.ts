// A registry of source names: where inbound keys come from (the inbox's
// sources, the session keys' sources). A wing declares each of its sources
// once, when its module loads; the kernel refuses a name nobody declared
// before it reads or writes anything under it, so a new surface adds its
// source in its own folder and a typo never becomes a key space of its own.
// A name is stored with every key, so a declared name never changes.

/** What a source's name may be: it is stored beside every key. */
export const SOURCE_NAME_SYNTAX = /^[a-z][a-z0-9_-]{0,31}$/;

export class SourceRegistry<Details> {
  private readonly sources = new Map<string, Details>();

  /** `what` names the registry in its errors ("inbox source"). `same` tells whether two declarations agree. */
  constructor(
    private readonly what: string,
    private readonly same: (a: Details, b: Details) => boolean,
  ) {}

  /** Declares `name`; declaring it again with the same details is harmless, with others a programming error. */
  declare(name: string, details: Details): string {
    if (!SOURCE_NAME_SYNTAX.test(name)) {
      throw new RangeError(`${this.what} names are 1 to 32 lower-case letters, digits, "_" and "-", starting with a letter; got ${JSON.stringify(name)}`);
    }
    const earlier = this.sources.get(name);
    if (earlier !== undefined && !this.same(earlier, details)) throw new RangeError(`the ${this.what} ${JSON.stringify(name)} is declared twice, differently`);
    this.sources.set(name, details);
    return name;
  }

  /** The details of a declared source; an undeclared one is a programming error (RangeError). */
  require(name: string): Details {
    const details = this.sources.get(name);
    if (details === undefined) throw new RangeError(`the ${this.what} ${JSON.stringify(name)} is not declared; its wing declares it once, before using it`);
    return details;
  }

  names(): string[] {
    return [...this.sources.keys()].sort();
  }
}
