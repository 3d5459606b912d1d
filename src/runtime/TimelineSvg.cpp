#include "runtime/TimelineSvg.h"

#include "runtime/Profile.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace nhc::rt {

namespace {

// The picture's layout, in pixels.
constexpr double kLabelWidth = 120, kPlotWidth = 1600, kRightMargin = 20;
constexpr double kTop = 48, kLaneHeight = 16, kLaneGap = 6, kAxisHeight = 34;
constexpr double kLegendRow = 18;
/** The narrowest bar: two pixels, so that a transfer of a few nanoseconds is still seen. */
constexpr double kMinBarWidth = 2;
constexpr size_t kLegendGroups = 12;
constexpr const char *kCriticalLane = "critical path";
constexpr const char *kCriticalColour = "#000000"; // no group takes black

std::string escape(const std::string &s) {
    std::string out;
    for (char c : s) {
        switch (c) {
        case '&':
            out += "&amp;";
            break;
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        case '"':
            out += "&quot;";
            break;
        default:
            out += c;
        }
    }
    return out;
}

std::string fmt(const char *format, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, format, v);
    return buf;
}

/** The profile's tracks, then the critical path's lane. */
std::vector<std::string> lanes_of(const std::vector<TraceEvent> &events) {
    std::vector<std::string> lanes = trace_tracks(events);
    lanes.push_back(kCriticalLane);
    return lanes;
}

/** A colour per group, by the groups' time (largest first): hues a golden angle apart. */
std::map<std::string, std::string> group_colours(const std::vector<ProfileRow> &rows) {
    std::map<std::string, std::string> colours;
    for (size_t i = 0; i < rows.size(); i++) {
        double hue = std::fmod(double(i) * 137.508, 360.0);
        colours[rows[i].group] =
            rows[i].group == "(unnamed)" ? "#999999" : "hsl(" + fmt("%.1f", hue) + ",65%,50%)";
    }
    return colours;
}

struct Bar {
    double start_ns, end_ns;
    std::string group;
};

/** A lane's bars, those of one group closer than `merge_ns` drawn as one. */
std::vector<Bar> merged_bars(std::vector<Bar> bars, double merge_ns) {
    std::sort(bars.begin(), bars.end(), [](const Bar &a, const Bar &b) {
        return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.group < b.group;
    });
    std::vector<Bar> out;
    for (const Bar &b : bars) {
        if (!out.empty() && out.back().group == b.group &&
            b.start_ns - out.back().end_ns < merge_ns) {
            out.back().end_ns = std::max(out.back().end_ns, b.end_ns);
            continue;
        }
        out.push_back(b);
    }
    return out;
}

/** A tick step of 1, 2 or 5 times a power of ten giving about ten ticks over `total_us`. */
double tick_step_us(double total_us) {
    double raw = std::max(total_us, 1e-3) / 10.0;
    double power = std::pow(10.0, std::floor(std::log10(raw)));
    for (double m : {1.0, 2.0, 5.0})
        if (m * power >= raw)
            return m * power;
    return 10.0 * power;
}

class SvgWriter {
public:
    SvgWriter(double total_ns, size_t lanes) : total_ns_(std::max(total_ns, 1.0)), lanes_(lanes) {}
    double x(double ns) const { return kLabelWidth + ns / total_ns_ * kPlotWidth; }
    double lane_y(size_t lane) const { return kTop + double(lane) * (kLaneHeight + kLaneGap); }
    double plot_bottom() const { return lane_y(lanes_); }
    double ns_per_pixel() const { return total_ns_ / kPlotWidth; }

    void rect(double x0, double y, double w, double h, const std::string &fill,
              const std::string &extra = "", const std::string &title = "") {
        out_ += "<rect x=\"" + fmt("%.2f", x0) + "\" y=\"" + fmt("%.1f", y) + "\" width=\"" +
                fmt("%.2f", w) + "\" height=\"" + fmt("%.1f", h) + "\" fill=\"" + fill + "\"" +
                extra;
        out_ += title.empty() ? "/>\n" : "><title>" + escape(title) + "</title></rect>\n";
    }
    /** A bar from `start_ns` to `end_ns`, at least kMinBarWidth wide and inside the plot. */
    void bar(double start_ns, double end_ns, double y, double h, const std::string &fill,
             const std::string &title = "") {
        double w = std::max(x(end_ns) - x(start_ns), kMinBarWidth);
        rect(std::min(x(start_ns), kLabelWidth + kPlotWidth - w), y, w, h, fill, "", title);
    }
    void text(double x0, double y, const std::string &s, const std::string &extra = "") {
        out_ += "<text x=\"" + fmt("%.1f", x0) + "\" y=\"" + fmt("%.1f", y) + "\"" + extra + ">" +
                escape(s) + "</text>\n";
    }
    void raw(const std::string &s) { out_ += s; }
    std::string take() { return std::move(out_); }

private:
    double total_ns_;
    size_t lanes_;
    std::string out_;
};

void draw_axis(SvgWriter &svg, double total_ns) {
    double bottom = svg.plot_bottom();
    double step = tick_step_us(total_ns / 1000.0);
    for (double t = 0; t <= total_ns / 1000.0 + 1e-9; t += step) {
        double x0 = svg.x(t * 1000.0);
        svg.raw("<line x1=\"" + fmt("%.2f", x0) + "\" y1=\"" + fmt("%.1f", kTop - 4) + "\" x2=\"" +
                fmt("%.2f", x0) + "\" y2=\"" + fmt("%.1f", bottom + 4) +
                "\" stroke=\"#cccccc\" stroke-width=\"0.5\"/>\n");
        svg.text(x0, bottom + 18, fmt(step < 1 ? "%.2f" : "%.0f", t), " text-anchor=\"middle\"");
    }
    svg.text(kLabelWidth + kPlotWidth, bottom + 32, "time (us)", " text-anchor=\"end\"");
}

void draw_legend(SvgWriter &svg, const std::vector<ProfileRow> &rows,
                 const std::map<std::string, std::string> &colours, double total_ns) {
    double y = svg.plot_bottom() + kAxisHeight + 10;
    svg.text(kLabelWidth, y,
             "largest groups of ONNX nodes (time they add, share):", " font-weight=\"bold\"");
    for (size_t i = 0; i < rows.size() && i < kLegendGroups; i++) {
        double row_y = y + double(i + 1) * kLegendRow;
        svg.rect(kLabelWidth, row_y - 11, 12, 12, colours.at(rows[i].group));
        std::string name =
            rows[i].group.size() > 90 ? rows[i].group.substr(0, 87) + "..." : rows[i].group;
        svg.text(kLabelWidth + 18, row_y,
                 name + "  " + fmt("%.2f us", rows[i].adds_ns / 1000.0) + "  " +
                     fmt("%.1f%%", 100.0 * rows[i].adds_ns / std::max(total_ns, 1.0)));
    }
}

} // namespace

std::vector<size_t> critical_path(const std::vector<TraceEvent> &events) {
    std::vector<size_t> by_end(events.size());
    for (size_t i = 0; i < events.size(); i++)
        by_end[i] = i;
    // Ties by index, so that the path does not depend on the sort's order of equal ends.
    std::sort(by_end.begin(), by_end.end(), [&](size_t a, size_t b) {
        return events[a].end_ns != events[b].end_ns ? events[a].end_ns < events[b].end_ns : a < b;
    });
    std::vector<size_t> path;
    if (by_end.empty())
        return path;
    size_t at = by_end.size() - 1; // position in by_end
    while (true) {
        size_t current = by_end[at];
        path.push_back(current);
        double start = events[current].start_ns;
        // The latest end at or before this start, among the instructions ending before this one.
        auto before = std::upper_bound(by_end.begin(), by_end.begin() + long(at), start,
                                       [&](double t, size_t i) { return t < events[i].end_ns; });
        if (before == by_end.begin())
            break;
        at = size_t(before - by_end.begin()) - 1;
    }
    return path;
}

std::string timeline_svg(const std::vector<TraceEvent> &events, double total_ns,
                         const std::string &model_name) {
    std::vector<std::string> lanes = lanes_of(events);
    std::vector<ProfileRow> rows = profile_rows(events); // largest first
    std::map<std::string, std::string> colours = group_colours(rows);
    SvgWriter svg(total_ns, lanes.size());
    double height = svg.plot_bottom() + kAxisHeight + 10 +
                    double(std::min(rows.size(), kLegendGroups) + 1) * kLegendRow + 10;
    double width = kLabelWidth + kPlotWidth + kRightMargin;
    svg.raw("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + fmt("%.0f", width) +
            "\" height=\"" + fmt("%.0f", height) + "\" font-family=\"sans-serif\" " +
            "font-size=\"11\">\n");
    svg.rect(0, 0, width, height, "white");
    svg.text(10, 22,
             model_name + ": " + fmt("%.3f us", total_ns / 1000.0) +
                 " (simulated); one lane per engine and DMA queue, bars coloured by group of "
                 "ONNX nodes; the critical path in its lane and marked in black under its bars",
             " font-size=\"14\" font-weight=\"bold\"");

    std::map<std::string, size_t> lane_index;
    for (size_t i = 0; i < lanes.size(); i++) {
        lane_index[lanes[i]] = i;
        svg.rect(kLabelWidth, svg.lane_y(i), kPlotWidth, kLaneHeight, "#f2f2f2",
                 " class=\"lane\" data-lane=\"" + escape(lanes[i]) + "\"");
        svg.text(kLabelWidth - 8, svg.lane_y(i) + 12, lanes[i], " text-anchor=\"end\"");
    }
    draw_axis(svg, total_ns);

    std::vector<std::vector<Bar>> bars(lanes.size()), marks(lanes.size());
    for (const TraceEvent &e : events)
        bars[lane_index.at(e.track)].push_back({e.start_ns, e.end_ns, group_name(e)});
    size_t critical = lane_index.at(kCriticalLane);
    for (size_t i : critical_path(events)) {
        const TraceEvent &e = events[i];
        bars[critical].push_back({e.start_ns, e.end_ns, group_name(e)});
        marks[lane_index.at(e.track)].push_back({e.start_ns, e.end_ns, ""});
    }
    double merge_ns = 0.5 * svg.ns_per_pixel();
    for (size_t lane = 0; lane < lanes.size(); lane++) {
        for (const Bar &b : merged_bars(bars[lane], merge_ns))
            svg.bar(b.start_ns, b.end_ns, svg.lane_y(lane) + 1, kLaneHeight - 2,
                    colours.at(b.group),
                    b.group + ": " + fmt("%.3f", b.start_ns / 1000.0) + " to " +
                        fmt("%.3f us", b.end_ns / 1000.0));
        for (const Bar &m : merged_bars(marks[lane], merge_ns))
            svg.bar(m.start_ns, m.end_ns, svg.lane_y(lane) + kLaneHeight - 2, 3, kCriticalColour);
    }
    draw_legend(svg, rows, colours, total_ns);
    svg.raw("</svg>\n");
    return svg.take();
}

} // namespace nhc::rt
