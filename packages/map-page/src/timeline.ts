// The timeline (issue 35): the capture dates of the surveys at the view centre, oldest to newest,
// as a strip on the map (a press chooses the date, as the Date list does), and the outlines of
// those surveys' footprints on the straight-down layers, the shown date's drawn bold. Footprints
// are the STAC items' geometries, asked once per survey through @nadir/client.
import type { NadirClient, Survey } from '@nadir/client';

export interface TimelineSetUp {
  map: L.Map;
  strip: HTMLElement;
  /** The reader chose a date ('' for the latest). */
  choose: (date: string) => void;
}

export interface Timeline {
  /** Draws the dates of `surveys` (newest first, as coverage lists them) and, when `outlines`, their footprints. */
  show(client: NadirClient, surveys: Survey[], chosen: string, outlines: boolean): Promise<void>;
}

type Footprint = GeoJSON.Geometry;

const OUTLINE = { color: '#ffd400', weight: 1.5, dashArray: '4 4', fill: false, interactive: false };
const CHOSEN = { ...OUTLINE, weight: 3, dashArray: '' };

export function setUpTimeline({ map, strip, choose }: TimelineSetUp): Timeline {
  const outlines = L.layerGroup().addTo(map);
  const footprints = new Map<string, Footprint>();

  async function footprintsOf(client: NadirClient, surveys: Survey[]): Promise<void> {
    const missing = surveys.map((survey) => survey.id).filter((id) => !footprints.has(id));
    if (missing.length === 0) return;
    for await (const item of client.stacSearch({ ids: missing, limit: missing.length })) {
      if (item.geometry) footprints.set(item.id, item.geometry as Footprint);
    }
  }

  function drawStrip(surveys: Survey[], chosen: string): void {
    const dates = [...new Set(surveys.map((survey) => survey.captureDate!))].sort();
    const newest = dates.at(-1);
    strip.replaceChildren(
      ...dates.map((date) => {
        const button = document.createElement('button');
        button.type = 'button';
        const tags = surveys.filter((s) => s.captureDate === date).flatMap((s) => s.tags ?? []);
        button.textContent = date;
        button.title = tags.length > 0 ? `${date}: ${tags.join(', ')}` : date;
        if (tags.some((tag) => tag.startsWith('disaster'))) button.classList.add('disaster');
        const shown = chosen ? date === chosen : date === newest;
        button.setAttribute('aria-pressed', String(shown));
        // The newest is what "latest" shows: pressing it goes back to the latest.
        button.addEventListener('click', () => choose(date === newest ? '' : date));
        return button;
      }),
    );
    strip.hidden = dates.length === 0;
    strip.dataset.dates = dates.join(',');
  }

  return {
    async show(client, surveys, chosen, withOutlines) {
      drawStrip(surveys, chosen);
      outlines.clearLayers();
      if (!withOutlines || surveys.length === 0) {
        map.getContainer().dataset.outlines = '0';
        return;
      }
      await footprintsOf(client, surveys);
      const shownDate = chosen || surveys[0]?.captureDate;
      let drawn = 0;
      // Older first, so the shown date's bold outline lies on top.
      for (const survey of [...surveys].reverse()) {
        const footprint = footprints.get(survey.id);
        if (!footprint) continue;
        L.geoJSON(footprint, { style: survey.captureDate === shownDate ? CHOSEN : OUTLINE }).addTo(outlines);
        drawn++;
      }
      map.getContainer().dataset.outlines = String(drawn);
    },
  };
}
