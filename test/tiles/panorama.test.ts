import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TILE_TYPES, type TileType } from '../../src/catalogue/survey.js';
import { rotatedClientTileForServer, rotationFor, serverTileForRotatedClient } from '../../src/tiles/panorama.js';
import { mulberry32 } from '../geo/helpers.js';

/** Where pixel (px, py) of a size x size image goes when the image turns `degrees` clockwise. */
function turnClockwise(degrees: number, px: number, py: number, size: number): [number, number] {
  switch (degrees) {
    case 0:
      return [px, py];
    case 90: // the left column becomes the top row
      return [size - 1 - py, px];
    case 180:
      return [size - 1 - px, size - 1 - py];
    case 270: // the right column becomes the top row
      return [py, size - 1 - px];
    default:
      throw new Error(`not a quarter turn: ${degrees}`);
  }
}

describe('panorama rotation', () => {
  it('turns each direction up: North 0, East 270, South 180, West 90 degrees clockwise', () => {
    assert.deepEqual(
      TILE_TYPES.map((type) => [type, rotationFor(type)]),
      [
        ['Vert', 0],
        ['North', 0],
        ['South', 180],
        ['East', 270],
        ['West', 90],
        ['TrueOrtho', 0],
      ],
    );
    // East up: the middle of a tile's east edge ends at the middle of the top edge; West likewise.
    assert.deepEqual(turnClockwise(rotationFor('East'), 255, 128, 256), [128, 0]);
    assert.deepEqual(turnClockwise(rotationFor('West'), 0, 127, 256), [128, 0]);
    assert.deepEqual(turnClockwise(rotationFor('South'), 128, 255, 256), [127, 0]);
  });

  it('applies the decisions.md formulas exactly', () => {
    const z = 3; // 2^z - 1 = 7
    assert.deepEqual(serverTileForRotatedClient('East', z, 1, 2), { z, x: 7 - 2, y: 1 });
    assert.deepEqual(serverTileForRotatedClient('West', z, 1, 2), { z, x: 2, y: 7 - 1 });
    assert.deepEqual(serverTileForRotatedClient('South', z, 1, 2), { z, x: 7 - 1, y: 7 - 2 });
    assert.deepEqual(serverTileForRotatedClient('North', z, 1, 2), { z, x: 1, y: 2 });
    assert.deepEqual(serverTileForRotatedClient('Vert', z, 1, 2), { z, x: 1, y: 2 });
    assert.deepEqual(serverTileForRotatedClient('East', 0, 0, 0), { z: 0, x: 0, y: 0 });
    assert.deepEqual(serverTileForRotatedClient('West', 24, 0, 0), { z: 24, x: 0, y: 2 ** 24 - 1 });
  });

  it('round-trips and is a bijection of the grid', () => {
    for (const type of TILE_TYPES) {
      for (let z = 0; z <= 4; z++) {
        const n = 2 ** z;
        const seen = new Set<string>();
        for (let x = 0; x < n; x++) {
          for (let y = 0; y < n; y++) {
            const server = serverTileForRotatedClient(type, z, x, y);
            assert.ok(server.x >= 0 && server.x < n && server.y >= 0 && server.y < n, `${type} ${z}/${x}/${y}`);
            seen.add(`${server.x},${server.y}`);
            assert.deepEqual(rotatedClientTileForServer(type, z, server.x, server.y), { z, x, y });
            const client = rotatedClientTileForServer(type, z, x, y);
            assert.deepEqual(serverTileForRotatedClient(type, z, client.x, client.y), { z, x, y });
          }
        }
        assert.equal(seen.size, n * n, `${type} z${z}`);
      }
    }
  });

  it("rotating each tile in place and re-indexing the grid is the whole world's rotation", () => {
    const rand = mulberry32(11);
    for (const type of TILE_TYPES) {
      const degrees = rotationFor(type);
      for (let i = 0; i < 500; i++) {
        const z = Math.floor(rand() * 21);
        const world = 256 * 2 ** z;
        // A ground pixel of the ordinary (north-up) world, its tile and its pixel in that tile.
        const gx = Math.floor(rand() * world);
        const gy = Math.floor(rand() * world);
        const server = { z, x: Math.floor(gx / 256), y: Math.floor(gy / 256) };
        // Where the client, whose world is rotated the same way, shows it.
        const [cx, cy] = turnClockwise(degrees, gx, gy, world);
        const client = { x: Math.floor(cx / 256), y: Math.floor(cy / 256) };
        assert.deepEqual(serverTileForRotatedClient(type, z, client.x, client.y), server, `${type} z${z}`);
        assert.deepEqual(turnClockwise(degrees, gx % 256, gy % 256, 256), [cx % 256, cy % 256]);
      }
    }
  });

  it('puts the viewing direction up on the client', () => {
    const z = 10;
    const world = 256 * 2 ** z;
    const up: Record<TileType, [number, number]> = {
      Vert: [0, -1],
      TrueOrtho: [0, -1],
      North: [0, -1],
      East: [1, 0],
      South: [0, 1],
      West: [-1, 0],
    };
    for (const type of TILE_TYPES) {
      const [dx, dy] = up[type];
      const from = turnClockwise(rotationFor(type), 5000, 7000, world);
      const to = turnClockwise(rotationFor(type), 5000 + dx, 7000 + dy, world);
      assert.deepEqual([to[0] - from[0], to[1] - from[1]], [0, -1], `${type}: a step that way goes up`);
    }
  });
});
