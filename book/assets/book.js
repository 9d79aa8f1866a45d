// Draw every plotly figure of a page from its JSON, and let the keyboard move a figure's slider
// (plotly's own sliders answer only to the mouse).
"use strict";

function bookApplyStep(gd, index) {
  const slider = gd.layout.sliders[0];
  const steps = slider.steps;
  index = Math.max(0, Math.min(steps.length - 1, index));
  const step = steps[index];
  return Plotly.relayout(gd, {"sliders[0].active": index})
    .then(() => Plotly.Plots.executeAPICommand(gd, step.method, step.args))
    .then(() => bookLabel(gd));
}

function bookLabel(gd) {
  const slider = gd.layout.sliders[0];
  const step = slider.steps[slider.active || 0];
  gd.setAttribute("aria-valuenow", String(slider.active || 0));
  gd.setAttribute("aria-valuetext", (slider.currentvalue && slider.currentvalue.prefix || "") + step.label);
}

function bookKeyboardSlider(gd) {
  const steps = gd.layout.sliders[0].steps;
  gd.tabIndex = 0;
  gd.setAttribute("role", "slider");
  gd.setAttribute("aria-valuemin", "0");
  gd.setAttribute("aria-valuemax", String(steps.length - 1));
  gd.setAttribute("aria-label", "slider: arrow keys move it");
  bookLabel(gd);
  gd.on("plotly_sliderchange", () => bookLabel(gd));
  gd.addEventListener("keydown", (event) => {
    const now = gd.layout.sliders[0].active || 0;
    const moves = {ArrowLeft: now - 1, ArrowDown: now - 1, ArrowRight: now + 1, ArrowUp: now + 1,
                   Home: 0, End: steps.length - 1};
    if (event.key in moves) {
      event.preventDefault();
      bookApplyStep(gd, moves[event.key]);
    }
  });
}

document.addEventListener("DOMContentLoaded", () => {
  for (const gd of document.querySelectorAll(".book-plotly")) {
    const figure = JSON.parse(document.getElementById(gd.dataset.figure).textContent);
    Plotly.newPlot(gd, figure.data || [], figure.layout || {}, {responsive: true}).then(() => {
      if (gd.layout.sliders && gd.layout.sliders.length) {
        bookKeyboardSlider(gd);
      }
      gd.dataset.ready = "true";
    });
  }
});
