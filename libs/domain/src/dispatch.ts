/** A run to hand to the queue: its id, when it is due, and the queue it travels on. */
export interface DispatchItem {
  id: string;
  availableAt: Date;
  queue: string;
}
