import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';

/*
 * A uPlot chart, sized to its container (phone widths included) and redrawn when its data
 * changes. Numbers here are for drawing only: amounts stay strings everywhere else.
 */

export interface ChartProps {
  /** What the chart shows, for screen readers (the table beside it has the values). */
  readonly label: string;
  readonly options: Omit<uPlot.Options, 'width' | 'height'>;
  readonly data: uPlot.AlignedData;
  readonly height?: number;
}

export function Chart({ label, options, data, height = 220 }: ChartProps) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current;
    if (element === null) return undefined;
    // The axes' bounds uPlot drew, on the element: for tests and anyone inspecting the page.
    const showBounds = (plot: uPlot): void => {
      element.dataset.xMin = String(plot.scales.x?.min ?? '');
      element.dataset.xMax = String(plot.scales.x?.max ?? '');
      element.dataset.yMax = String(plot.scales.y?.max ?? '');
    };
    const hooks = { ...options.hooks, draw: [...(options.hooks?.draw ?? []), showBounds] };
    const plot = new uPlot(
      { ...options, hooks, width: element.clientWidth, height },
      data,
      element,
    );
    const observer = new ResizeObserver(() => {
      plot.setSize({ width: element.clientWidth, height });
    });
    observer.observe(element);
    return () => {
      observer.disconnect();
      plot.destroy();
    };
  }, [options, data, height]);
  return <div class="chart" role="img" aria-label={label} ref={box} />;
}
