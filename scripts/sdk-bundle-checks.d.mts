/** One line per fault found in the files of `dist` (a built @kairos/sdk); none when it is fit to publish. */
export function bundleFaults(dist: string): string[];
