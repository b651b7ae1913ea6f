// Values only the secret store keeps, put back into the model's input: a wing
// whose tools' outputs may name a secret by a marker instead of holding it (a
// node command that printed a secret it was given) registers a revealer, and a
// model step asks it before each call. Only the step's own response's calls
// are revealed, and only their own secrets; a step with no marker in its
// input pays a string scan and no statement.
import type { Item } from '../../generated/schemas.js';
import type { Queryable } from '../store/db.js';

export interface SecretMarkerRevealer {
  /** The items with the markers of this response's calls replaced by their values; the same array when there are none. */
  reveal(q: Queryable, projectId: string, responseId: string, items: Item[]): Promise<Item[]>;
}
