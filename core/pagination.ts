// Cursor pagination shared by every list: ids are time-ordered, so the cursor is
// the last id of the previous page and a page is `id > cursor ORDER BY id`.

export interface PageRequest {
  limit?: number;
  after?: string;
}

export interface Page<T> {
  object: 'list';
  data: T[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

export const DEFAULT_PAGE_SIZE = 20;

/** Rows were fetched with LIMIT pageSize + 1; the extra row only says there is more. */
export function toPage<Row extends { id: string }, T>(rows: Row[], request: PageRequest, view: (row: Row) => T): Page<T> {
  const size = request.limit ?? DEFAULT_PAGE_SIZE;
  const pageRows = rows.slice(0, size);
  return {
    object: 'list',
    data: pageRows.map(view),
    first_id: pageRows[0]?.id ?? null,
    last_id: pageRows.at(-1)?.id ?? null,
    has_more: rows.length > size,
  };
}

export const fetchSize = (request: PageRequest): number => (request.limit ?? DEFAULT_PAGE_SIZE) + 1;
