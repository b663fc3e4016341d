// The swipe comparison: the compare layer lies in a pane of its own above the main layer and is
// clipped to the right of the slider, so the left shows one date and the right the other.
export const COMPARE_PANE = 'compare';

export interface Swipe {
  pane: string;
  /** Shows or hides the slider; the clip follows. */
  setActive(on: boolean): void;
  clip(): void;
}

export function setUpSwipe(map: L.Map, slider: HTMLInputElement, divider: HTMLElement): Swipe {
  const pane = map.createPane(COMPARE_PANE);
  // Above the main tiles (tilePane 200), below overlays and controls.
  pane.style.zIndex = '250';
  let active = false;

  function clip(): void {
    if (!active) {
      pane.style.clip = '';
      return;
    }
    const size = map.getSize();
    const split = (size.x * Number(slider.value)) / 100;
    // The pane moves with the map: the clip is in layer coordinates, redone on every move.
    const nw = map.containerPointToLayerPoint([0, 0]);
    const se = map.containerPointToLayerPoint(size);
    const left = map.containerPointToLayerPoint([split, 0]).x;
    pane.style.clip = `rect(${nw.y}px, ${se.x}px, ${se.y}px, ${left}px)`;
    divider.style.left = `${split}px`;
  }

  map.on('move zoom resize viewreset', clip);
  slider.addEventListener('input', clip);
  return {
    pane: COMPARE_PANE,
    setActive(on) {
      active = on;
      slider.hidden = !on;
      divider.hidden = !on;
      clip();
    },
    clip,
  };
}
