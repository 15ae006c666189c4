import { useEffect, useRef } from "hono/jsx/dom";
import uPlot from "uplot";

export type AlignedData = uPlot.AlignedData;

/** A line of a time chart: its legend's label and how it is drawn. */
export interface ChartLine {
  label: string;
  stroke: string;
  fill?: string;
  dash?: number[];
}

const HEIGHT = 260;
const widthOf = (figure: HTMLElement) => Math.max(280, figure.clientWidth);

/**
 * Requests over time in `figure` (uPlot; the numbers at the pointer in its
 * legend), drawn anew by `draw` with bucket starts (Unix seconds) and a
 * series per line, as wide as the figure as the window resizes. Both
 * consoles' charts: the callers' usage, the operators' traffic.
 */
export function timeChart(
  figure: HTMLElement,
  yLabel: string,
  lines: readonly ChartLine[],
): { draw: (data: uPlot.AlignedData) => void; stop: () => void } {
  let plot: uPlot | undefined;
  const resize = () => plot?.setSize({ width: widthOf(figure), height: HEIGHT });
  window.addEventListener("resize", resize);
  return {
    draw(data) {
      plot?.destroy();
      figure.replaceChildren();
      plot = new uPlot(
        {
          width: widthOf(figure),
          height: HEIGHT,
          series: [
            { label: "Bucket starting", value: (_u, v) => (v == null ? "—" : new Date(v * 1000).toISOString()) },
            ...lines.map((line) => ({ width: 2, ...line })),
          ],
          axes: [{}, { label: yLabel }],
          scales: { x: { time: true } },
        },
        data,
        figure,
      );
    },
    stop() {
      window.removeEventListener("resize", resize);
      plot?.destroy();
    },
  };
}

/**
 * A time chart as a component: `data` drawn (or nothing yet), with its caption under it. The chart is made when the
 * figure is, and taken down with it.
 */
export function TimeChart(props: {
  yLabel: string;
  lines: readonly ChartLine[];
  data: uPlot.AlignedData | undefined;
  captionId: string;
  caption: string | undefined;
}) {
  const area = useRef<HTMLDivElement>(null);
  const chart = useRef<ReturnType<typeof timeChart>>(null);
  useEffect(() => {
    chart.current = timeChart(area.current!, props.yLabel, props.lines);
    return () => chart.current?.stop();
  }, []);
  useEffect(() => {
    if (props.data) chart.current?.draw(props.data);
  }, [props.data]);
  return (
    <figure class="chart" aria-labelledby={props.captionId}>
      <div ref={area} />
      {props.caption !== undefined && <figcaption id={props.captionId}>{props.caption}</figcaption>}
    </figure>
  );
}
