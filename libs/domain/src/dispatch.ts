/** A run to hand to the queue: its id, when it is due, and the queue it travels on. */
export interface DispatchItem {
  id: string;
  availableAt: Date;
  queue: string;
  /**
   * The BullMQ job id when it is not the run id: a run a limit held and released travels as a new
   * job (`<run id>-h<holds>`), since the job that was refused its claim may not have left the
   * transport yet, and an add under its id would be ignored.
   */
  jobId?: string | null;
  /** 1 (first) to 5, the order the transport hands the queue's jobs out in; absent: 3. */
  priority?: number;
}
