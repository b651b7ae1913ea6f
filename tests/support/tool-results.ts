// What the tools of a run answered, read from a REST response's output: the calls Palai ran are `mcp_call`
// items (their approval_request_id is the call id), the caller's own answers `function_call_output` items.

export interface ToolResult {
  call_id: string;
  output: string;
  name?: string;
}

type OutputItem = { type: string; [field: string]: unknown };

/** `output`: a REST response's output items, as the SDK types them or as JSON. */
export function toolResults(output: readonly object[]): ToolResult[] {
  return (output as OutputItem[]).flatMap((item): ToolResult[] => {
    if (item.type === 'mcp_call' && typeof item.output === 'string')
      return [{ call_id: String(item.approval_request_id), output: item.output, name: String(item.name) }];
    if (item.type === 'function_call_output') return [{ call_id: String(item.call_id), output: String(item.output) }];
    return [];
  });
}

/** The first tool result (undefined when none). */
export const toolResult = (output: readonly object[]): ToolResult | undefined => toolResults(output)[0];

/** The calls Palai ran, as their mcp_call items. */
export const ranCalls = (output: readonly object[]) =>
  (output as OutputItem[]).filter((item) => item.type === 'mcp_call') as Array<OutputItem & { approval_request_id: string; name: string; arguments: string }>;
