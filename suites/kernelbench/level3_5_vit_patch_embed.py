import torch
import torch.nn as nn


class Model(nn.Module):
    """ViT patch embedding: Conv2d with kernel = stride = patch, flatten, prepend the class token,
    add the learned position embedding. Output (batch, patches + 1, embed_dim)."""

    def __init__(self, image_size: int, patch_size: int, in_chans: int, embed_dim: int):
        super().__init__()
        self.proj = nn.Conv2d(in_chans, embed_dim, patch_size, stride=patch_size)
        n_patches = (image_size // patch_size) ** 2
        self.cls_token = nn.Parameter(torch.randn(1, 1, embed_dim) * 0.02)
        self.pos_embed = nn.Parameter(torch.randn(1, n_patches + 1, embed_dim) * 0.02)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        patches = self.proj(x).flatten(2).transpose(1, 2)
        cls = self.cls_token.expand(x.shape[0], -1, -1)
        return torch.cat([cls, patches], dim=1) + self.pos_embed


batch_size = 128
image_size = 224
patch_size = 16
in_chans = 3
embed_dim = 768


def get_inputs():
    return [torch.randn(batch_size, in_chans, image_size, image_size)]


def get_init_inputs():
    return [image_size, patch_size, in_chans, embed_dim]
