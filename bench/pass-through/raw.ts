import type { CpuSample } from '../load/cpu.js';

export interface PassThroughSettings {
  rounds: number;
  seconds: number;
  connections: number;
  threads: number;
  maxTiles: number;
}

export type PassThroughTarget =
  | 'bare'
  | 'bare-headers'
  | 'bare-owed'
  | 'nadir'
  | 'nadir-304'
  | 'nadir-metrics'
  | 'nginx';

export interface PassThroughPoint {
  target: PassThroughTarget;
  round: number;
  requestsPerSecond: number;
  requests: number;
  p99Ms: number;
  /** What the target's processes spent during the run (bench/load/cpu.ts). */
  cpu: CpuSample;
  error?: string;
}

export interface PassThroughRaw {
  settings: PassThroughSettings;
  machine: { cpus: number; model: string; loadStart: number[]; loadEnd: number[] };
  node: string;
  tiles: number;
  medianBytes: number;
  targets: { id: PassThroughTarget; name: string }[];
  points: PassThroughPoint[];
  seconds: number;
}
