// Conversation items (a response's input, a session's history), as read.
import type { Item } from '@palai/sdk';
import { prettyJsonText } from './format';

function ItemView({ item }: { item: Item }) {
  switch (item.type) {
    case 'message':
      return (
        <div class={`item message role-${item.role}`}>
          <span class="item-kind">{item.role}</span>
          <p class="item-text">{item.content.map((part) => part.text).join('')}</p>
        </div>
      );
    case 'function_call':
      return (
        <div class="item function-call">
          <span class="item-kind">function call: {item.name}</span>
          <pre class="json">{prettyJsonText(item.arguments)}</pre>
        </div>
      );
    case 'function_call_output':
      return (
        <div class="item function-output">
          <span class="item-kind">function output ({item.call_id})</span>
          <pre class="json">{prettyJsonText(item.output)}</pre>
        </div>
      );
  }
}

export function ItemList({ items, empty }: { items: Item[]; empty: string }) {
  if (items.length === 0) return <p class="muted">{empty}</p>;
  return (
    <ol class="items">
      {items.map((item, index) => (
        <li key={item.id ?? index}>
          <ItemView item={item} />
        </li>
      ))}
    </ol>
  );
}
