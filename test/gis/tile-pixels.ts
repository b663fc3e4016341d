import sharp from 'sharp';

/** An image's RGBA pixels (alpha added when it has none): what the GIS tests compare tiles by. */
export async function rgba(body: Buffer | string): Promise<{ data: Buffer; width: number; height: number }> {
  const { data, info } = await sharp(body).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

/** The four tiles of a 2 x 2 block, as offsets from its top-left tile. */
export const BLOCK_OF_FOUR = [
  [0, 0],
  [1, 0],
  [0, 1],
  [1, 1],
] as const;
