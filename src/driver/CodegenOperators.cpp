// The operators that compile end to end: register_codegen_operators() of driver/Codegen.h.

#include "driver/Codegen.h"
#include "graph/FlattenElementwise.h"
#include "graph/OperatorSupport.h"

namespace nhc {

void register_codegen_operators() {
    // Each listed operator compiles end to end and matches ONNX's test data on the simulator
    // (tests/e2e). Concat is a DMA per input; Gather covers rows of a 2-D table (a one-hot
    // contraction); Conv, MaxPool, AveragePool, Resize, InstanceNormalization and the operators
    // of graph/Decompose go through the graph passes' rewrites. Gelu is an internal node of
    // graph/FuseGelu (ONNX has it from 20), Swish one of graph/FuseSwish.
    for (const std::string &op : elementwise_op_types())
        if (op != "Gelu" && op != "Swish")
            register_operator({op, "codegen"});
    for (const char *op : {"And",
                           "Compress",
                           "ConstantOfShape",
                           "EyeLike",
                           "LRN",
                           "MeanVarianceNormalization",
                           "OneHot",
                           "Pad",
                           "Tile",
                           "Trilu",
                           "GatherElements",
                           "Hardmax",
                           "ScatterND",
                           "NegativeLogLikelihoodLoss",
                           "SoftmaxCrossEntropyLoss",
                           "ArgMax",
                           "ArgMin",
                           "AveragePool",
                           "BatchNormalization",
                           "CastLike",
                           "Concat",
                           "Conv",
                           "ConvTranspose",
                           "DepthToSpace",
                           "Dropout",
                           "Equal",
                           "Expand",
                           "Flatten",
                           "Gather",
                           "Gemm",
                           "GlobalAveragePool",
                           "GlobalMaxPool",
                           "Greater",
                           "GreaterOrEqual",
                           "Identity",
                           "InstanceNormalization",
                           "IsInf",
                           "LayerNormalization",
                           "Less",
                           "LessOrEqual",
                           "LogSoftmax",
                           "MatMul",
                           "MaxPool",
                           "Not",
                           "Or",
                           "ReduceL1",
                           "ReduceL2",
                           "ReduceLogSum",
                           "ReduceLogSumExp",
                           "ReduceMax",
                           "ReduceMean",
                           "ReduceMin",
                           "ReduceProd",
                           "ReduceSum",
                           "ReduceSumSquare",
                           "Reshape",
                           "Resize",
                           "Slice",
                           "Softmax",
                           "SpaceToDepth",
                           "Split",
                           "Squeeze",
                           "Transpose",
                           "Unsqueeze",
                           "Xor"})
        register_operator({op, "codegen"});
}

} // namespace nhc
