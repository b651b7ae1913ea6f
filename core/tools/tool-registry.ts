// Which provider serves which `type` of tool entry, and the agent's tools for one
// response: every entry resolved by its provider (concurrently, since a remote
// provider may have to list its tools), the names checked to be unique across
// providers, because the model calls a tool by name alone.
import { ToolResolutionError, type ResolvedTool, type ToolProvider, type ToolResolveContext, type ToolSpecEntry } from './tool-port.js';

/** How an entry is named in messages: its position, type and name. */
function describe(entry: ToolSpecEntry, index: number): string {
  return `tools[${index}] (${entry.type}${entry.name === undefined ? '' : ` ${JSON.stringify(entry.name)}`})`;
}

export class ToolRegistry {
  private readonly providers = new Map<string, ToolProvider>();

  /** A later provider of the same kind replaces the earlier one. */
  register<S extends ToolSpecEntry>(provider: ToolProvider<S>): this {
    this.providers.set(provider.kind, provider);
    return this;
  }

  get(kind: string): ToolProvider {
    const provider = this.providers.get(kind);
    if (!provider) {
      throw new ToolResolutionError(`No tool provider is registered for tool type ${JSON.stringify(kind)}; registered: ${this.kinds().join(', ') || 'none'}.`);
    }
    return provider;
  }

  kinds(): string[] {
    return [...this.providers.keys()];
  }

  /** What is wrong with an entry at agent creation, or null: its provider's check, without calling out. */
  validateSpec<E extends ToolSpecEntry>(entry: E): string | null {
    const provider = this.providers.get(entry.type);
    if (!provider) return `no tool provider serves type ${JSON.stringify(entry.type)}; known: ${this.kinds().join(', ')}`;
    return provider.validateSpec?.(entry) ?? null;
  }

  /** The runnable tools of an agent spec's `tools`, by name, in the order of the entries. */
  async resolveAll<E extends ToolSpecEntry>(specTools: readonly E[], context: ToolResolveContext): Promise<Map<string, ResolvedTool>> {
    const resolved = await Promise.all(
      specTools.map(async (entry) => {
        const provider = this.get(entry.type);
        const tools = await provider.resolve(entry, context);
        for (const tool of tools) {
          // The entry's own class wins over the provider's.
          if (entry.consequence !== undefined) tool.consequence = entry.consequence;
          // The kind labels metrics by provider; a provider may not speak for another.
          if (tool.kind !== provider.kind) {
            throw new ToolResolutionError(`The ${provider.kind} provider resolved tool ${JSON.stringify(tool.name)} with kind ${JSON.stringify(tool.kind)}.`);
          }
        }
        return tools;
      }),
    );
    const byName = new Map<string, ResolvedTool>();
    const origin = new Map<string, number>();
    resolved.forEach((tools, index) => {
      for (const tool of tools) {
        const first = origin.get(tool.name);
        if (first !== undefined) {
          const from =
            first === index
              ? `both from ${describe(specTools[index], index)}`
              : `one from ${describe(specTools[first], first)} and one from ${describe(specTools[index], index)}`;
          throw new ToolResolutionError(`Two tools are named ${JSON.stringify(tool.name)}: ${from}.`);
        }
        origin.set(tool.name, index);
        byName.set(tool.name, tool);
      }
    });
    return byName;
  }
}
