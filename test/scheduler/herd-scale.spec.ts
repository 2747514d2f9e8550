/**
 * The herd at CI scale (see herd.ts): 100,000 pending schedules, 5,000 of them due at one instant,
 * on the test's transport; then the same herd on a Redis Cluster of three masters with the runs
 * queue in six shards, whose jobs every master serves a part of.
 *
 * The Cluster's herd keeps 20,000 schedules pending rather than 100,000. The pending ones load the
 * ledger (the scheduler's scans of the schedules table, the seeding), which the first herd covers
 * and which does not depend on the transport; what the shards change is the hand-over of the 5,000
 * runs due at once, which is kept whole. The describes run one after the other, so the two herds
 * never fall due together on the machine.
 */
import { startRedisCluster } from '../support/engines.js';
import { describeHerd } from './herd.js';

const PENDING = Number(process.env.KAIROS_TEST_HERD_PENDING ?? 100_000);
const HERD = Number(process.env.KAIROS_TEST_HERD ?? 5_000);
const CLUSTER_PENDING = Math.min(PENDING, 20_000);
const CLUSTER_SHARDS = 6;

describeHerd('a herd at scale', { pending: PENDING, herd: HERD });

describeHerd(`a herd at scale on a Redis Cluster, ${CLUSTER_SHARDS} shards per queue`, {
  pending: CLUSTER_PENDING,
  herd: HERD,
  shards: CLUSTER_SHARDS,
  transport: async () => {
    const cluster = await startRedisCluster();
    return {
      env: { REDIS_URL: '', REDIS_CLUSTER_NODES: cluster.nodesVariable, KAIROS_QUEUE_SHARDS: String(CLUSTER_SHARDS) },
      stop: () => cluster.stop(),
    };
  },
});
