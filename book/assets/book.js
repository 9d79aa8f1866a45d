// Draw every plotly figure of a page from its JSON, and let the keyboard move a figure's slider
// (plotly's own sliders answer only to the mouse).
"use strict";

function bookApplyStep(gd, index) {
  const steps = gd.layout.sliders[0].steps;
  const step = steps[Math.max(0, Math.min(steps.length - 1, index))];
  const args = step.args || [];
  const command = {relayout: Plotly.relayout, restyle: Plotly.restyle, update: Plotly.update,
                   animate: Plotly.animate}[step.method];
  return Plotly.relayout(gd, {"sliders[0].active": steps.indexOf(step)})
    .then(() => command ? command(gd, ...args) : null)
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
  gd.setAttribute("aria-label", "the cut: the right arrow loosens it, the left arrow tightens it, "
                  + "Home and End go to either end");
  bookLabel(gd);
  gd.on("plotly_sliderchange", () => bookLabel(gd));
  // keys can come faster than plotly redraws: count them at once, apply the steps one after another
  let target = gd.layout.sliders[0].active || 0;
  let pending = Promise.resolve();
  gd.on("plotly_sliderchange", (event) => { target = event.slider.steps.indexOf(event.step); });
  // plotly's grip and rail swallow the mouse's default, so a click or a drag left the focus on the page and the
  // arrow keys did nothing: the slider takes the focus itself, and the keys go on from where the mouse left it
  const focus = () => { if (document.activeElement !== gd) gd.focus({preventScroll: true}); };
  gd.addEventListener("pointerdown", focus, true);
  gd.on("plotly_sliderstart", focus);
  gd.on("plotly_sliderend", focus);
  gd.addEventListener("keydown", (event) => {
    const moves = {ArrowLeft: target - 1, ArrowDown: target - 1, ArrowRight: target + 1, ArrowUp: target + 1,
                   Home: 0, End: steps.length - 1};
    if (event.key in moves) {
      event.preventDefault();
      target = Math.max(0, Math.min(steps.length - 1, moves[event.key]));
      const index = target;
      pending = pending.then(() => bookApplyStep(gd, index));
    }
  });
}

document.addEventListener("DOMContentLoaded", () => {
  for (const gd of document.querySelectorAll(".book-plotly")) {
    const figure = JSON.parse(document.getElementById(gd.dataset.figure).textContent);
    // a slider figure is one control (role="slider"): plotly's toolbar buttons cannot sit inside it
    const slider = Boolean(figure.layout && figure.layout.sliders && figure.layout.sliders.length);
    Plotly.newPlot(gd, figure.data || [], figure.layout || {},
                   {responsive: true, displayModeBar: slider ? false : "hover"}).then(() => {
      if (gd.layout.sliders && gd.layout.sliders.length) {
        bookKeyboardSlider(gd);
      }
      gd.dataset.ready = "true";
    });
  }
});
