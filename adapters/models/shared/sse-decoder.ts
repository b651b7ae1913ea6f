// Server-sent events from text as it arrives, the way the OpenAI SDK decodes
// them (its SSEDecoder and LineDecoder): lines end at \n, \r or \r\n, a line
// starting with ':' is a comment, `event` and `data` are the fields read (data
// lines joined with \n, one space after the colon dropped), a blank line ends
// an event, and one in progress when the stream ends is still delivered.
export interface ServerSentEvent {
  event: string | null;
  data: string;
}

export class SseDecoder {
  private pending = '';
  private event: string | null = null;
  private data: string[] = [];

  /** The events `text` completes; a partial line waits for the next call. */
  decode(text: string): ServerSentEvent[] {
    let buffer = this.pending + text;
    const events: ServerSentEvent[] = [];
    // A trailing \r may be the first half of \r\n: its line waits for the next chunk.
    const heldCr = buffer.endsWith('\r');
    if (heldCr) buffer = buffer.slice(0, -1);
    if (buffer.includes('\r')) buffer = buffer.replace(/\r\n?/g, '\n');
    let start = 0;
    for (let end = buffer.indexOf('\n'); end !== -1; end = buffer.indexOf('\n', start)) {
      this.line(buffer.slice(start, end), events);
      start = end + 1;
    }
    this.pending = buffer.slice(start) + (heldCr ? '\r' : '');
    return events;
  }

  /** At the end of the stream: the last line and the event it was part of, if any. */
  flush(): ServerSentEvent[] {
    const events: ServerSentEvent[] = [];
    const rest = this.pending.endsWith('\r') ? this.pending.slice(0, -1) : this.pending;
    this.pending = '';
    if (rest !== '') this.line(rest, events);
    this.line('', events);
    return events;
  }

  private line(line: string, events: ServerSentEvent[]): void {
    if (line === '') {
      if (!this.event && this.data.length === 0) return;
      events.push({ event: this.event, data: this.data.join('\n') });
      this.event = null;
      this.data = [];
      return;
    }
    if (line.charCodeAt(0) === 58 /* : */) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32 /* space */) value = value.slice(1);
    if (field === 'event') this.event = value;
    else if (field === 'data') this.data.push(value);
  }
}
