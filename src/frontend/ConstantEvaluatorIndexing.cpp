/** \file
 * Host evaluators of indexing operators the device does not run: GatherND, ScatterElements
 * (with its opset-16/18 reductions), ReverseSequence and TfIdfVectorizer over integer tokens (its
 * string pools need string tensors, which the host does not hold) (ONNX Operators.md, opsets
 * 9-18). They
 * fold when their inputs are constants and otherwise run in a host segment
 * (driver/HostPartition.h). Elements are copied in their own type (integers exactly, floats
 * through double, which holds every float16/bfloat16/float32 value); a reduction computes in
 * double or int64 and rounds once into the output's type.
 */

#include "frontend/ConstantEvaluatorSupport.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

namespace nhc::folding {

namespace {

void copy_element(HostTensor &to, int64_t at, const HostTensor &from, int64_t from_at) {
    if (dtype_is_float(from.dtype()))
        to.set_f64(at, from.get_f64(from_at));
    else
        to.set_i64(at, from.get_i64(from_at));
}

/** An index along a dimension of `extent`, negative ones counted from the end; NHC_EFLD001 when
 *  it is out of range. */
int64_t checked_index(const Ctx &c, int64_t index, int64_t extent) {
    if (index < -extent || index >= extent)
        c.fail("index " + std::to_string(index) + " is out of range for a dimension of " +
               std::to_string(extent));
    return index < 0 ? index + extent : index;
}

int64_t product(const Shape &s, size_t from, size_t to) {
    int64_t n = 1;
    for (size_t d = from; d < to; d++)
        n *= s[d];
    return n;
}

} // namespace

Outputs gather_nd(const Ctx &c) {
    const HostTensor &data = c.input(0), &indices = c.input(1);
    const Shape &ds = data.shape(), &is = indices.shape();
    const int64_t batch_dims = c.attr_int("batch_dims", 0);
    if (is.empty() || batch_dims < 0 || batch_dims >= int64_t(is.size()) ||
        batch_dims >= int64_t(ds.size()))
        c.fail("batch_dims " + std::to_string(batch_dims) + " does not suit data of shape " +
               shape_str(ds) + " and indices of shape " + shape_str(is));
    const size_t b = size_t(batch_dims);
    const int64_t depth = is.back(); // how many leading dims of a batch item one tuple indexes
    if (depth < 1 || b + size_t(depth) > ds.size() ||
        !std::equal(ds.begin(), ds.begin() + std::ptrdiff_t(b), is.begin()))
        c.fail("indices of shape " + shape_str(is) + " do not index data of shape " +
               shape_str(ds) + " with batch_dims " + std::to_string(batch_dims));
    Shape out_shape(is.begin(), is.end() - 1);
    out_shape.insert(out_shape.end(), ds.begin() + std::ptrdiff_t(b) + depth, ds.end());
    const int64_t inner = product(ds, b + size_t(depth), ds.size());
    const int64_t batches = product(ds, 0, b), per_batch = product(ds, b, ds.size());
    const int64_t tuples = product(is, 0, is.size() - 1);
    const int64_t tuples_per_batch = batches ? tuples / batches : 0;
    const std::vector<int64_t> strides = row_major_strides(ds);
    HostTensor out(data.dtype(), out_shape);
    for (int64_t t = 0; t < tuples; t++) {
        int64_t offset = (t / std::max<int64_t>(tuples_per_batch, 1)) * per_batch;
        for (int64_t j = 0; j < depth; j++) {
            const size_t d = b + size_t(j);
            offset += checked_index(c, indices.get_i64(t * depth + j), ds[d]) * strides[d];
        }
        for (int64_t i = 0; i < inner; i++)
            copy_element(out, t * inner + i, data, offset + i);
    }
    return std::vector<HostTensor>{std::move(out)};
}

Outputs scatter_elements(const Ctx &c) {
    const HostTensor &data = c.input(0), &indices = c.input(1), &updates = c.input(2);
    const Shape &ds = data.shape(), &is = indices.shape();
    if (updates.shape() != is || is.size() != ds.size())
        c.fail("indices of shape " + shape_str(is) + " and updates of shape " +
               shape_str(updates.shape()) + " do not suit data of shape " + shape_str(ds));
    const int64_t axis = c.norm_axis(c.attr_int("axis", 0), data.rank());
    const auto *reduction_attr = c.attr("reduction");
    const std::string reduction = reduction_attr ? reduction_attr->s() : "none";
    if (reduction != "none" && reduction != "add" && reduction != "mul" && reduction != "max" &&
        reduction != "min")
        c.fail("reduction '" + reduction + "' is not one of none, add, mul, max, min");
    const bool is_float = dtype_is_float(data.dtype());
    // In double for floats, in int64 for integers (a duplicate index reduces in turn).
    auto reduce = [&](auto old, auto update) {
        return reduction == "add"   ? old + update
               : reduction == "mul" ? old * update
               : reduction == "max" ? std::max(old, update)
               : reduction == "min" ? std::min(old, update)
                                    : update;
    };
    HostTensor out(data.dtype(), ds);
    for (int64_t i = 0; i < data.numel(); i++)
        copy_element(out, i, data, i);
    const std::vector<int64_t> data_strides = row_major_strides(ds);
    const std::vector<int64_t> index_strides = row_major_strides(is);
    for (int64_t p = 0; p < indices.numel(); p++) {
        int64_t target = 0; // p's coordinates in data, with the one along axis from indices
        for (size_t d = 0; d < is.size(); d++) {
            int64_t coord = (p / index_strides[d]) % is[d];
            if (int64_t(d) == axis)
                coord = checked_index(c, indices.get_i64(p), ds[d]);
            else if (coord >= ds[d])
                c.fail("indices of shape " + shape_str(is) + " reach past data of shape " +
                       shape_str(ds));
            target += coord * data_strides[d];
        }
        if (is_float)
            out.set_f64(target, reduce(out.get_f64(target), updates.get_f64(p)));
        else
            out.set_i64(target, reduce(out.get_i64(target), updates.get_i64(p)));
    }
    return std::vector<HostTensor>{std::move(out)};
}

Outputs reverse_sequence(const Ctx &c) {
    const HostTensor &x = c.input(0), &lens = c.input(1);
    const Shape &s = x.shape();
    const int64_t time_axis = c.attr_int("time_axis", 0), batch_axis = c.attr_int("batch_axis", 1);
    if (s.size() < 2 || (time_axis != 0 && time_axis != 1) || batch_axis != 1 - time_axis)
        c.fail("time_axis " + std::to_string(time_axis) + " and batch_axis " +
               std::to_string(batch_axis) + " do not suit an input of shape " + shape_str(s) +
               " (one is 0, the other 1)");
    const int64_t batch = s[size_t(batch_axis)], time = s[size_t(time_axis)];
    if (lens.numel() != batch)
        c.fail("sequence_lens has " + std::to_string(lens.numel()) + " elements, the batch " +
               std::to_string(batch));
    const std::vector<int64_t> strides = row_major_strides(s);
    HostTensor out(x.dtype(), s);
    for (int64_t i = 0; i < x.numel(); i++) {
        const int64_t b = (i / strides[size_t(batch_axis)]) % batch;
        const int64_t t = (i / strides[size_t(time_axis)]) % time;
        const int64_t len = lens.get_i64(b);
        if (len < 0 || len > time)
            c.fail("sequence_lens[" + std::to_string(b) + "] = " + std::to_string(len) +
                   " is outside [0, " + std::to_string(time) + "]");
        const int64_t from = t < len ? len - 1 - t : t;
        copy_element(out, i, x, i + (from - t) * strides[size_t(time_axis)]);
    }
    return std::vector<HostTensor>{std::move(out)};
}

Outputs tf_idf_vectorizer(const Ctx &c) {
    const HostTensor &x = c.input(0);
    const auto pool = c.attr_ints("pool_int64s"), starts = c.attr_ints("ngram_counts"),
               slots = c.attr_ints("ngram_indexes");
    const int64_t min_n = c.attr_int("min_gram_length", 0),
                  max_n = c.attr_int("max_gram_length", 0);
    const int64_t max_skip = c.attr_int("max_skip_count", 0);
    const auto *mode_attr = c.attr("mode");
    const std::string mode = mode_attr ? mode_attr->s() : "";
    if (!pool || !starts || !slots || dtype_is_float(x.dtype()) || x.rank() < 1 || x.rank() > 2 ||
        min_n < 1 || max_n < min_n || max_n > int64_t(starts->size()) || max_skip < 0 ||
        (mode != "TF" && mode != "IDF" && mode != "TFIDF"))
        c.fail("it needs integer tokens [N] or [B, N], pool_int64s, ngram_counts, ngram_indexes, "
               "1 <= min_gram_length <= max_gram_length <= the n-gram lengths pooled, and mode "
               "TF, IDF or TFIDF");
    const auto weights_attr = c.attr("weights");
    std::vector<double> weights(slots->size(), 1.0);
    if (weights_attr) {
        if (weights_attr->floats_size() != int(slots->size()))
            c.fail("weights has " + std::to_string(weights_attr->floats_size()) + " values for " +
                   std::to_string(slots->size()) + " n-grams");
        for (int i = 0; i < weights_attr->floats_size(); i++)
            weights[size_t(i)] = weights_attr->floats(i);
    }
    // Each pooled n-gram, as its tokens, to its position among the n-grams (the index into
    // ngram_indexes): n-grams of length n start at element ngram_counts[n - 1] of the pool.
    std::map<std::vector<int64_t>, size_t> position;
    size_t count = 0;
    for (size_t n = 1; n <= starts->size(); n++) {
        const int64_t begin = (*starts)[n - 1],
                      end = n < starts->size() ? (*starts)[n] : int64_t(pool->size());
        if (begin < 0 || end > int64_t(pool->size()) || begin > end || (end - begin) % int64_t(n))
            c.fail("ngram_counts does not cut pool_int64s into whole n-grams");
        for (int64_t at = begin; at < end; at += int64_t(n))
            position.emplace(
                std::vector<int64_t>(pool->begin() + at, pool->begin() + at + int64_t(n)), count++);
    }
    if (count != slots->size())
        c.fail("ngram_indexes has " + std::to_string(slots->size()) + " values for " +
               std::to_string(count) + " pooled n-grams");
    int64_t width = 0;
    for (int64_t slot : *slots)
        width = std::max(width, slot + 1);
    const int64_t rows = x.rank() == 2 ? x.shape()[0] : 1, length = x.shape().back();
    HostTensor out(DType::Float32, x.rank() == 2 ? Shape{rows, width} : Shape{width});
    std::vector<double> counts(static_cast<size_t>(width));
    std::vector<int64_t> gram;
    for (int64_t r = 0; r < rows; r++) {
        std::fill(counts.begin(), counts.end(), 0.0);
        auto tally = [&] {
            if (auto it = position.find(gram); it != position.end())
                counts[size_t((*slots)[it->second])] += 1;
        };
        for (int64_t i = 0; i < length; i++) {
            // A unigram once per position; longer n-grams once per skip (tokens skip + 1 apart).
            if (min_n == 1) {
                gram.assign(1, x.get_i64(r * length + i));
                tally();
            }
            for (int64_t skip = 0; skip <= max_skip; skip++)
                for (int64_t n = std::max<int64_t>(min_n, 2); n <= max_n; n++) {
                    if (i + (n - 1) * (skip + 1) >= length)
                        break;
                    gram.clear();
                    for (int64_t k = 0; k < n; k++)
                        gram.push_back(x.get_i64(r * length + i + k * (skip + 1)));
                    tally();
                }
        }
        for (size_t p = 0; p < slots->size(); p++) {
            const int64_t slot = (*slots)[p];
            const double tf = counts[size_t(slot)];
            out.set_f64(r * width + slot, mode == "TF"    ? tf
                                          : mode == "IDF" ? (tf > 0 ? weights[p] : 0.0)
                                                          : tf * weights[p]);
        }
    }
    return std::vector<HostTensor>{std::move(out)};
}

} // namespace nhc::folding
