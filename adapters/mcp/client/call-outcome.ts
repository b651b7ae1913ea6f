// A tools/call result as the model's tool output. A result with `isError` is a
// tool error (the model reads it and may correct itself); a tool with an output
// schema must return structuredContent that satisfies it, which then is the
// output (as JSON); otherwise the output is the content blocks' text, with a
// short note for each block that is not text.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ToolError, type ToolOutcome } from '../../../core/tools/tool-port.js';
import { schemaProblems, type PreparedSchema } from './tool-schemas.js';

/** Tool outputs are journaled and sent to the model on every later step: a longer one is cut. */
export const MAX_OUTPUT_CHARS = 256 * 1024;

type Block = CallToolResult['content'][number];

function blockText(block: Block): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'image':
    case 'audio':
      return `[${block.type}: ${block.mimeType}]`;
    case 'resource_link':
      return `[resource: ${block.uri}${block.name ? ` (${block.name})` : ''}]`;
    case 'resource':
      return 'text' in block.resource && typeof block.resource.text === 'string' ? block.resource.text : `[resource: ${block.resource.uri}]`;
    default: {
      const unknown: never = block;
      return `[${(unknown as { type: string }).type}]`;
    }
  }
}

export const contentText = (content: CallToolResult['content']): string => content.map(blockText).join('\n\n');

const cut = (text: string): string =>
  text.length > MAX_OUTPUT_CHARS ? `${text.slice(0, MAX_OUTPUT_CHARS)}\n[output cut at ${MAX_OUTPUT_CHARS} characters]` : text;

export function callOutcome(result: CallToolResult, tool: string, outputSchema: PreparedSchema | null): ToolOutcome {
  const text = contentText(result.content ?? []);
  if (result.isError) throw new ToolError(cut(text) || `The tool ${tool} failed without saying why.`);
  if (outputSchema) {
    if (result.structuredContent === undefined) throw new ToolError(`The tool ${tool} has an output schema but returned no structured content.`);
    const problems = schemaProblems(outputSchema, result.structuredContent);
    if (problems) throw new ToolError(`The tool ${tool} returned structured content that does not satisfy its output schema: ${problems}`);
  }
  return { kind: 'output', output: cut(result.structuredContent !== undefined ? JSON.stringify(result.structuredContent) : text) };
}
