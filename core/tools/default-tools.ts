// The tool providers every hub has. Providers that need configuration (MCP
// servers, remote agents) are registered beside these by the composition root.
import { builtinTools } from './builtin/builtin-provider.js';
import { functionTools } from './function-provider.js';
import { ToolRegistry } from './tool-registry.js';

export function defaultTools(): ToolRegistry {
  return new ToolRegistry().register(builtinTools).register(functionTools);
}
