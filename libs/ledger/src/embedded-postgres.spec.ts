import { describe, expect, it } from 'vitest';
import { blockingFolder, placement } from './embedded-postgres.js';

const ROOT = 0;
const POSTGRES = { uid: 101, gid: 104 };

/** A file system of folders by path: mode, owner and group. */
function tree(folders: Record<string, [mode: number, uid?: number, gid?: number]>) {
  return (file: string) => {
    const folder = folders[file];
    if (!folder) throw new Error(`no ${file} in the test tree`);
    return { mode: folder[0], uid: folder[1] ?? ROOT, gid: folder[2] ?? ROOT };
  };
}

describe('where a server started by root can run as the postgres user', () => {
  const machine = tree({
    '/': [0o755],
    '/root': [0o700],
    '/root/k': [0o755],
    '/root/k/node_modules': [0o755],
    '/root/k/node_modules/bin': [0o755],
    '/root/k/.kairos': [0o755],
    '/tmp': [0o1777],
    '/tmp/tmp.x': [0o700],
    '/tmp/tmp.x/k': [0o755],
    '/tmp/tmp.x/k/.kairos': [0o755],
    '/srv': [0o755],
    '/srv/k': [0o755],
    '/srv/k/node_modules': [0o755],
    '/srv/k/node_modules/bin': [0o755],
    '/srv/k/.kairos': [0o755],
    '/srv/grouped': [0o750, ROOT, POSTGRES.gid],
    '/srv/owned': [0o700, POSTGRES.uid, 0],
    '/srv/others-only': [0o705, ROOT, POSTGRES.gid],
  });

  it('in a checkout under /root, neither the binaries nor the data folder can be reached: /root bars both', () => {
    expect(placement('/root/k/node_modules/bin/postgres', '/root/k/.kairos/pg', POSTGRES, machine)).toEqual({
      binariesBlockedBy: '/root',
      dataBlockedBy: '/root',
    });
  });

  it('in a mktemp -d folder (mode 0700), the temporary folder bars both', () => {
    expect(blockingFolder('/tmp/tmp.x/k/.kairos/pg', POSTGRES, machine)).toBe('/tmp/tmp.x');
  });

  it('in a checkout every user can pass through, nothing moves', () => {
    expect(placement('/srv/k/node_modules/bin/postgres', '/srv/k/.kairos/pg', POSTGRES, machine)).toEqual({ binariesBlockedBy: null, dataBlockedBy: null });
  });

  it('a data folder set elsewhere (KAIROS_DATA_DIR) is judged apart from the binaries', () => {
    expect(placement('/root/k/node_modules/bin/postgres', '/srv/k/.kairos/pg', POSTGRES, machine)).toEqual({ binariesBlockedBy: '/root', dataBlockedBy: null });
  });

  it('reads the owner bits for the owner, the group bits for its group and the other bits for the rest', () => {
    expect(blockingFolder('/srv/owned/pg', POSTGRES, machine)).toBeNull();
    expect(blockingFolder('/srv/grouped/pg', POSTGRES, machine)).toBeNull();
    // A group without the search bit bars its members even when others may pass, as the kernel does.
    expect(blockingFolder('/srv/others-only/pg', POSTGRES, machine)).toBe('/srv/others-only');
    expect(blockingFolder('/srv/others-only/pg', { uid: 5000, gid: 5000 }, machine)).toBeNull();
  });
});
