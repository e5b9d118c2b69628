"""tessera.nn.functional: the registry's nn ops under torch.nn.functional's names."""
from .. import ops

relu = ops.relu
gelu = ops.gelu
silu = ops.silu
sigmoid = ops.sigmoid
tanh = ops.tanh
softmax = ops.softmax
log_softmax = ops.log_softmax
linear = ops.linear
conv2d = ops.conv2d
layer_norm = ops.layer_norm
mse_loss = ops.mse_loss
l1_loss = ops.l1_loss
cross_entropy = ops.cross_entropy
nll_loss = ops.nll_loss
max_pool2d = ops.max_pool2d
avg_pool2d = ops.avg_pool2d
batch_norm = ops.batch_norm
pad = ops.pad
one_hot = ops.one_hot
scaled_dot_product_attention = ops.scaled_dot_product_attention


def dropout(x, p=0.5, training=True):
    return ops.dropout(x, p, training)


def embedding(input, weight, padding_idx=None):
    """torch.nn.functional.embedding's argument order (the registry op takes weight first)."""
    return ops.embedding(weight, input, padding_idx)
