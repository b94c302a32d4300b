"""The module OVMS Python nodes import: ``from pyovms import Tensor`` works unchanged."""

from ovmsx._core import Tensor

__all__ = ["Tensor"]
