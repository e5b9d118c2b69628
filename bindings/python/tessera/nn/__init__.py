"""tessera.nn: modules with parameters, over the registry's ops (as torch.nn)."""
from . import functional, init
from .modules import (Module, Parameter, Sequential, ModuleList, Linear, Conv2d, Embedding, LayerNorm, BatchNorm2d,
                      Dropout, ReLU, GELU, Tanh, Sigmoid, SiLU, Softmax, LogSoftmax, Flatten, Identity, MaxPool2d,
                      AvgPool2d, MSELoss, CrossEntropyLoss, L1Loss)

__all__ = ["functional", "init", "Module", "Parameter", "Sequential", "ModuleList", "Linear", "Conv2d", "Embedding",
           "LayerNorm", "BatchNorm2d", "Dropout", "ReLU", "GELU", "Tanh", "Sigmoid", "SiLU", "Softmax", "LogSoftmax",
           "Flatten", "Identity", "MaxPool2d", "AvgPool2d", "MSELoss", "CrossEntropyLoss", "L1Loss"]
